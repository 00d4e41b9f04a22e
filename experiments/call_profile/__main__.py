import sys

from experiments.call_profile.experiment import main

sys.exit(main())
