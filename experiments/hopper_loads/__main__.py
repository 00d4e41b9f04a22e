import sys

from experiments.hopper_loads.experiment import main

sys.exit(main())
