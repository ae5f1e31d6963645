"""The search engine: issues expansions for every running job, folds results into the graph,
publishes the work each node waits for, emits job events and ends jobs."""
