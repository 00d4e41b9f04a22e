import sys

from experiments.fastest_ablation.experiment import main

sys.exit(main())
