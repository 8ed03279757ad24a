//! `notes`: notes kept in a SQL database, the blueprint's `notesDatabase`.
//!
//! - `POST /notes` with `{"text": "..."}` inserts a note through the
//!   database's writer pool and answers `201` with `{"id": 1, "text": ...}`
//!   and its `location`;
//! - `GET /notes/{id}` reads it back through the reader pool: `200` with the
//!   note, or `404`.
//!
//! Each handler takes the application's one SQL database as a
//! [`SqlDatabase`] argument, and asks it for the pool it needs: the writer
//! for what changes data, the reader for what only reads (a deployment's
//! read replica where it has one, the writer's endpoint otherwise). The
//! pools are sqlx's own, so every sqlx query works on them.
//!
//! The table `notes` is made if absent on the first use in each process,
//! through the writer: an example needs no migration step to run. A real
//! application would migrate its schema before it serves (sqlx's migrations
//! run on these pools as they are).
//!
//! A database that cannot be reached (or is not linked) is an unhandled
//! error, as orders treats its queue's: the runtime answers the caller with
//! a `500`, and the handler's error names the database and what failed.
//!
//! Locally, `celerity-dev run notes` gives it the session's Postgres (see
//! `dev/README.md`); `notes --manifest` prints the handler manifest as JSON
//! instead of connecting.

use celerity::http::{HeaderMap, HeaderValue, HttpError, Json, Path, StatusCode};
use celerity::http_handler;
use celerity::resources::sql::{SqlDatabase, sqlx};
use serde::{Deserialize, Serialize};
use tokio::sync::OnceCell;

/// The body of `POST /notes`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewNote {
    text: String,
}

/// A note as it is answered.
#[derive(Debug, Serialize)]
struct Note {
    id: i64,
    text: String,
}

/// The table, as the first use in a process makes it.
const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS notes (
    id bigserial PRIMARY KEY,
    text text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
)";

/// Set once the table is known to exist: later requests do not ask again.
/// A failure leaves it unset, so that the next request tries again.
static TABLE: OnceCell<()> = OnceCell::const_new();

/// Makes the table through the writer, once per process. Both handlers
/// call it: a `GET` before any `POST` reads an empty table rather than
/// failing on a missing one.
async fn ensure_table(db: &SqlDatabase) -> celerity::Result<()> {
    TABLE
        .get_or_try_init(|| async {
            let pool: sqlx::PgPool = db.writer().await?;
            sqlx::query(CREATE_TABLE).execute(&pool).await?;
            Ok::<(), celerity::Error>(())
        })
        .await?;
    Ok(())
}

/// `POST /notes` with `{"text": "..."}`: the note, inserted through the
/// writer pool, with its id. A body that is not such JSON is answered `400`
/// by the SDK, naming the field; empty text is answered `400` here.
#[http_handler("POST::/notes")]
async fn create_note(
    db: SqlDatabase,
    Json(new): Json<NewNote>,
) -> celerity::Result<(StatusCode, HeaderMap, Json<Note>)> {
    if new.text.trim().is_empty() {
        return Err(HttpError::bad_request("text must not be empty").into());
    }
    ensure_table(&db).await?;
    let pool: sqlx::PgPool = db.writer().await?;
    let (id, text): (i64, String) = sqlx::query_as("INSERT INTO notes (text) VALUES ($1) RETURNING id, text")
        .bind(&new.text)
        .fetch_one(&pool)
        .await?;
    let mut headers = HeaderMap::new();
    headers.insert("location", HeaderValue::from_str(&format!("/notes/{id}")).map_err(celerity::Error::msg)?);
    Ok((StatusCode::CREATED, headers, Json(Note { id, text })))
}

/// `GET /notes/{id}`: the note, read through the reader pool, or `404`. An
/// id that is not a number is answered `400` by the SDK.
#[http_handler("GET::/notes/{id}")]
async fn get_note(db: SqlDatabase, Path(id): Path<i64>) -> celerity::Result<Json<Note>> {
    ensure_table(&db).await?;
    let pool: sqlx::PgPool = db.reader().await?;
    let found: Option<(i64, String)> =
        sqlx::query_as("SELECT id, text FROM notes WHERE id = $1").bind(id).fetch_optional(&pool).await?;
    match found {
        Some((id, text)) => Ok(Json(Note { id, text })),
        None => Err(HttpError::not_found(format!("no note {id}")).into()),
    }
}

/// Serves every handler the attributes above declare.
#[celerity::main]
async fn main() -> celerity::Result<()> {
    celerity::App::new().run().await
}
