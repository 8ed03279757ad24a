//! An axum `Router`, as an application may already have one, served as
//! Celerity HTTP handlers: the runtime routes the blueprint's tags to it,
//! and axum's own routing, extractors, state and layers do the rest.

use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::{Json, Router, routing::get};
use serde::{Deserialize, Serialize};
use tower_http::set_header::SetResponseHeaderLayer;

#[derive(Clone, Serialize)]
struct Note {
    id: usize,
    text: String,
}

type Notes = Arc<Mutex<Vec<Note>>>;

#[derive(Deserialize)]
struct NewNote {
    text: String,
}

#[derive(Deserialize)]
struct Page {
    limit: Option<usize>,
}

async fn list(State(notes): State<Notes>, Query(page): Query<Page>) -> Json<Vec<Note>> {
    let notes = notes.lock().unwrap();
    Json(notes.iter().take(page.limit.unwrap_or(usize::MAX)).cloned().collect())
}

async fn create(State(notes): State<Notes>, Json(new): Json<NewNote>) -> (StatusCode, Json<Note>) {
    let mut notes = notes.lock().unwrap();
    let note = Note { id: notes.len() + 1, text: new.text };
    notes.push(note.clone());
    (StatusCode::CREATED, Json(note))
}

async fn get_note(State(notes): State<Notes>, Path(id): Path<usize>) -> Result<Json<Note>, StatusCode> {
    let notes = notes.lock().unwrap();
    notes.iter().find(|note| note.id == id).cloned().map(Json).ok_or(StatusCode::NOT_FOUND)
}

fn router() -> Router {
    let no_store = SetResponseHeaderLayer::if_not_present(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Router::new()
        .route("/notes", get(list).post(create))
        .route("/notes/{id}", get(get_note))
        .layer(no_store)
        .with_state(Notes::default())
}

#[celerity::main]
async fn main() -> celerity::App {
    celerity::App::new().service(["GET::/notes", "POST::/notes", "GET::/notes/{id}"], router())
}
