from memls.cli import main

main()
