"""Online selective annotation: strategies that pick the next batch to label from a partly labelled pool."""
