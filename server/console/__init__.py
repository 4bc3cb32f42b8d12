"""The web console on the FE HTTP port (`/console`): databases, tables, partitions, tablets and rowsets; what the
engine decided on its own (compactions, dynamic partitions, auto buckets) as charts; queries with their profiles;
loads; a SQL playground. Server-rendered HTML with SVG charts drawn here (pygal): no JavaScript, nothing fetched
from elsewhere, so it works on an air-gapped machine."""
