"""ECG records in PhysioNet / Challenge format: SNOMED `#Dx` codes → label sets (`snomed`), the record reader and
writer (`records`: `.hea` + `.mat` 'val', or WFDB `.dat` through `wfdb`), and the offline simulator of multi-site
12-lead-like records with class-specific rate, rhythm and morphology (`simulate`, neurokit2's ecgsyn)."""
