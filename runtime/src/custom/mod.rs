//! custom events.
