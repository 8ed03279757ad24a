//! schedule events.
