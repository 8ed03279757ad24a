//! Several WebSocket routes and several schedules in one binary, for AWS
//! Lambda, where a function that serves more than one of them lets the
//! payload choose: a WebSocket message by its route, a schedule's event by
//! its rule.
//!
//! The WebSocket routes are keyed by `action` (an API whose messages say
//! `{"action": "subscribe", ...}`), so their function is deployed with
//! `CELERITY_ROUTING_KEY=action`. Each message is logged as it is run,
//! numbered in the process (`message <n> on <tag> from <connection>:
//! <body>`).
//!
//! Each schedule logs its firing (`<tag> ran <function>: input <input>`).
//! Two of them are bound by tag; the monthly one is bound by name, so its
//! schedule is the one its deployment names (`CELERITY_HANDLER_TAG`) or its
//! event's rule. The three functions are all called `report`, in modules of
//! their own: `CELERITY_HANDLER_ID=report` names all three, and a function
//! serves one.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};

use celerity::websocket::Message;
use celerity::{App, Context, State};

/// How many WebSocket messages this process has run.
#[derive(Default)]
struct Messages(AtomicU64);

async fn route(cx: Context, State(messages): State<Messages>, message: Message) -> celerity::Result<()> {
    let n = messages.0.fetch_add(1, Ordering::SeqCst) + 1;
    let body = message.text().unwrap_or("<binary>");
    tracing::info!("message {n} on {} from {}: {body}", cx.tag(), message.connection_id());
    Ok(())
}

fn fired(cx: &Context, trigger: &celerity::schedule::Trigger) {
    let input = String::from_utf8_lossy(trigger.raw_input());
    tracing::info!("{} ran {}: input {input}", cx.tag(), cx.handler_name());
}

mod nightly {
    use celerity::Context;
    use celerity::schedule::Trigger;

    pub(crate) async fn report(cx: Context, trigger: Trigger) {
        super::fired(&cx, &trigger);
    }
}

mod weekly {
    use celerity::Context;
    use celerity::schedule::Trigger;

    pub(crate) async fn report(cx: Context, trigger: Trigger) {
        super::fired(&cx, &trigger);
    }
}

mod monthly {
    use celerity::Context;
    use celerity::schedule::Trigger;

    pub(crate) async fn report(cx: Context, trigger: Trigger) {
        super::fired(&cx, &trigger);
    }
}

fn main() -> ExitCode {
    celerity::run_main(|| async {
        App::new()
            .without_compiled_handlers()
            .state(Messages::default())
            .websocket("action::$connect", route)
            .websocket("action::subscribe", route)
            .websocket("action::$default", route)
            .schedule("source::nightly-report::nightlyReport", nightly::report)
            .schedule("source::weekly-report::weeklyReport", weekly::report)
            .schedule_named("monthlyReport", monthly::report)
            .run()
            .await
    })
}
