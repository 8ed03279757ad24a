//! What handlers ask of the application through its handle.

use crate::App;
use crate::testing::{AppRequest, TestRequest};
use crate::{Context, Error};

#[tokio::test]
async fn requests_to_the_application_are_recorded() {
    async fn saturated(cx: Context) -> Result<(), Error> {
        let app = cx.app().ok_or_else(|| Error::msg("no application handle"))?;
        app.withhold();
        app.set_concurrency(4);
        app.resume();
        app.shutdown();
        Ok(())
    }
    let app = App::new().without_compiled_handlers().http("POST::/", saturated).into_test();
    assert!(app.app_requests().is_empty());
    assert_eq!(app.call("POST::/", TestRequest::post("/")).await.expect_http().status(), 204);
    let expected = [AppRequest::Withhold, AppRequest::SetConcurrency(4), AppRequest::Resume, AppRequest::Shutdown];
    assert_eq!(app.app_requests(), expected);
    app.handle().withhold();
    assert_eq!(app.app_requests().len(), 5);
}
