import sys

from experiments.migrate_legacy_results.experiment import main

sys.exit(main())
