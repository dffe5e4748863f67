"""What the two mancala games, Kalaha and Hus, share: one compiled alpha-beta search
(:mod:`.alphabeta`) over each game's own move kernel."""
