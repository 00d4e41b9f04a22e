import sys

from experiments.small_n_sweep.experiment import main

sys.exit(main())
