"""`fabric-report compare`: two result sets, or one against its references; the ratios to
reference."""
