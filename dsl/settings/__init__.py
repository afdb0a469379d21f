"""Settings: where qdsl keeps its state, its config file, environment and input bounds."""
