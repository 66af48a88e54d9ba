from fabrictest.txrx.cli import main

main()
