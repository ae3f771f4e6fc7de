from trainer.app.cli import main

main()
