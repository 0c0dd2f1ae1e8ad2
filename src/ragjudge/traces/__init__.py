"""The service's OpenTelemetry trace joined with each case (issue 41): the trace context sent with each request
(`context`), the OTLP/HTTP receiver (`receiver`, `otlp`, `store`), the conventions read as data
(`conventions`) by code written once (`findings`), and what a trace adds to a reply (`joining`), all driven by one
run's `session`."""
