import sys

from experiments.axis_triton_splits.experiment import main

sys.exit(main())
