from logmine.cli import main

main()
