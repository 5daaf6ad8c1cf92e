from icda.cli import main

raise SystemExit(main())
