from skycity_bench.cli import main

main()
