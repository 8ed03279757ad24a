//! consumer events.
