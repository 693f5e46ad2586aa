"""The HTML page (`html`, its command in `html_cli`) and the heatmap picture (`heatmap_png`)."""
