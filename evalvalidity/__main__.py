from evalvalidity.cli import main

raise SystemExit(main())
