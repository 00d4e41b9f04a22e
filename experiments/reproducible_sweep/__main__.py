import sys

from experiments.reproducible_sweep.experiment import main

sys.exit(main())
