import sys

from experiments.inductor_code.experiment import main

sys.exit(main())
