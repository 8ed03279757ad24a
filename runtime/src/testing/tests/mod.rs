//! Tests of `celerity::testing`, one file per feature.

mod app_requests;
mod calls;
mod deadlines;
mod outcomes;
mod panics;
mod served;
mod sources;
mod state;
mod ws;
