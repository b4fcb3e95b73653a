package metrics

import cluster "github.com/ozanturksever/go-cluster"

// ErrInvalidConfig is cluster.ErrInvalidConfig: an argument of New or Bind
// is missing, not a valid identifier, or does not match. The message names
// the field. Test it with errors.Is.
var ErrInvalidConfig = cluster.ErrInvalidConfig
