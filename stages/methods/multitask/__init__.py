"""Multitask vs single-task supervised training of one encoder per modality (CLIMB's "multitask pretraining"):
a 1-D CNN ECG encoder (`encoder`), single-task and multitask multi-label training with BCE and few-shot
fine-tuning (`train`), fusion heads on frozen encoders (`fusion`), and the own-data ECG benchmark (`own_data`,
`icml25 ecg-benchmark`). Knows nothing of papers."""
