"""The study planner: power, interval width and cost of candidate study designs, estimated by
simulating many studies and analysing each as the user would (``docs/planner.md``)."""
