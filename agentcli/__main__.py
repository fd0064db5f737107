from agentcli.cli import main

main()
