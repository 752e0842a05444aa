"""Writers of conformbench's dataset and scored replays in other tools'
layouts: the Hugging Face Hub's parquet configs, Inspect AI's eval logs.
Their libraries are optional extras, imported inside the functions that
need them."""
