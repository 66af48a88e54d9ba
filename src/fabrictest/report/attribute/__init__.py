"""`fabric-report attribute`: what the failures share (nodes, switches, links), and the
congestion impact factors."""
