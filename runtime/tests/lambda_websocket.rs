//! WebSocket sends on AWS Lambda, end to end: the `lambda_websocket`
//! example runs as a Lambda function against the test kit's Runtime API,
//! and its sends reach the stand-in Management API as signed
//! `PostToConnection` calls, one per message, failures reported by index.

use celerity_testkit::{HandlerProcess, LambdaRuntimeApi, ManagementApi};
use serde_json::json;

mod lambda_support;

use lambda_support::{WAIT, example};

fn relay_event(to: &[&str]) -> Vec<u8> {
    let body = json!({"event": "relay", "to": to, "text": "order ord-1 shipped"}).to_string();
    let event = json!({
        "requestContext": {
            "routeKey": "relay", "eventType": "MESSAGE", "messageId": "m-1", "connectionId": "sender-1=",
            "domainName": "abc123xmpl.execute-api.eu-west-1.amazonaws.com", "stage": "live",
            "requestId": "r-1", "connectedAt": 1_767_928_841_000_i64, "requestTimeEpoch": 1_767_928_841_500_i64,
            "identity": {"sourceIp": "192.0.2.55"}, "apiId": "abc123xmpl"
        },
        "body": body, "isBase64Encoded": false
    });
    serde_json::to_vec(&event).unwrap()
}

#[tokio::test]
async fn sends_are_signed_posts_to_each_connection_and_fail_by_index() {
    let api = LambdaRuntimeApi::start().await.unwrap();
    let management = ManagementApi::start().await.unwrap();
    let mut function = HandlerProcess::command(example("lambda_websocket"))
        .envs(api.env())
        .env_remove("CELERITY_RUNTIME_SOCKET")
        .env("CELERITY_HANDLER_TAG", "event::relay")
        .env("CELERITY_HANDLER_TYPE", "websocket")
        .env("AWS_ENDPOINT_URL_APIGATEWAYMANAGEMENTAPI", management.endpoint("live"))
        .spawn()
        .expect("spawn the example");

    let answer = api.invoke(relay_event(&["c-1=", "c/2"])).await.expect("an answer");
    assert_eq!(answer.json(), json!({"statusCode": 200}), "{}", function.output_text());
    let mut posts = Vec::new();
    for _ in 0..2 {
        posts.push(management.next_post(WAIT).await.expect("a PostToConnection"));
    }
    posts.sort_by(|a, b| a.connection_id.cmp(&b.connection_id));
    let connections: Vec<&str> = posts.iter().map(|post| post.connection_id.as_str()).collect();
    assert_eq!(connections, ["c-1=", "c/2"]);
    assert!(posts.iter().all(|post| post.data.as_ref() == b"order ord-1 shipped"));
    assert!(posts[1].path.ends_with("/live/@connections/c%2F2"), "{:?}", posts[1].path);
    assert!(posts[0].authorization.contains("/eu-west-1/execute-api/aws4_request"), "{:?}", posts[0]);

    // A closed connection fails its own message, by index, and the Ack says so.
    management.gone("gone-1");
    let answer = api.invoke(relay_event(&["c-1=", "gone-1"])).await.expect("an answer");
    let response = answer.json();
    assert_eq!(response["statusCode"], 500, "{response}");
    let reason = response["body"].as_str().unwrap();
    assert!(reason.contains("1 of 2 WebSocket messages failed") && reason.contains("gone"), "{reason}");
    assert_eq!(management.violations(), Vec::<String>::new());
    assert_eq!(api.violations(), Vec::<String>::new());
    let _ = function.kill().await;
}
