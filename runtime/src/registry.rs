//! The handlers a binary serves: registered at compile time by the attribute
//! macros, or explicitly with [`crate::App`], and checked before anything is
//! served.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use celerity_tags::{TagError, TagKind, parse_tag};

use crate::config::Configuration;
use crate::consumer::{ConsumerBatchHandler, ConsumerHandler, PerRecord, RecordOptions, WholeBatch};
use crate::context::Context;
use crate::context::StateMap;
use crate::custom::{Custom, CustomHandler};
use crate::error::Error;
use crate::http::{Http, HttpHandler, HttpService};
pub use crate::kind::HandlerKind;
use crate::layer::{EventLayer, HttpLayer, Layers, Step};
use crate::pipeline::{self, Endpoint, Handler, Kind, Needs};
use crate::schedule::{Schedule, ScheduleHandler};
pub use crate::session::HandlerKey;
use crate::session::HandlerSpec;
use crate::session::LazySource;
use crate::websocket::{WebSocket, WebSocketHandler};

/// Where a handler was registered: its Rust path and source location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    /// The function's Rust path, such as `orders::get_order`.
    pub function: &'static str,
    /// The source file.
    pub file: &'static str,
    /// The line.
    pub line: u32,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}:{})", self.function, self.file, self.line)
    }
}

/// One handler, ready to serve: how it is bound, what it serves, where it
/// came from, and the handler itself.
///
/// The kind comes from the handler's type, so a registration cannot pair a
/// handler with another kind's events. A tag is checked against its kind's
/// form and normalised (a catch-all `{path+}` becomes `{*path}`) when the
/// registration is made; a malformed one stops the application before it
/// serves anything, with the sentence the attribute would give.
#[derive(Clone)]
pub struct Registration {
    pub(crate) key: HandlerKey,
    pub(crate) kind: HandlerKind,
    pub(crate) max_concurrent: Option<u32>,
    pub(crate) origin: Origin,
    pub(crate) endpoint: Arc<dyn Endpoint>,
    /// What the handler's arguments need of the application and the route.
    pub(crate) needs: Needs,
    /// Its own layers, outermost first.
    pub(crate) layers: Vec<Step>,
    /// The guards protecting it, by name, in order.
    pub(crate) guards: Vec<String>,
    /// Why the tag does not fit the kind, if it does not.
    tag_error: Option<TagError>,
}

impl Registration {
    /// A handler of kind `K` bound to `key`, registered from the caller's
    /// source location. The kind is named, since a function such as
    /// `async fn f(cx: Context)` is a handler of every kind:
    ///
    /// ```
    /// use celerity::http::Http;
    /// use celerity::{HandlerKey, HandlerKind, Registration};
    ///
    /// async fn health() -> &'static str { "ok" }
    /// let registration = Registration::of::<Http, _, _>(HandlerKey::Tag("GET::/health".into()), health);
    /// assert_eq!(registration.kind(), HandlerKind::Http);
    /// ```
    ///
    /// The per-kind constructors ([`Registration::http`] and the others)
    /// say the same in fewer words.
    #[track_caller]
    pub fn of<K, H, Args>(key: HandlerKey, handler: H) -> Self
    where
        K: Kind,
        H: Handler<K, Args>,
        Args: 'static,
    {
        Registration::of_with::<K, H, Args>(key, handler, K::Options::default())
    }

    #[track_caller]
    fn of_with<K, H, Args>(key: HandlerKey, handler: H, options: K::Options) -> Self
    where
        K: Kind,
        H: Handler<K, Args>,
        Args: 'static,
    {
        const {
            assert!(
                H::BODY_READERS <= 1,
                "a handler can read its event's body (the request body, a message's body, a custom input) with one argument only"
            )
        };
        let location = std::panic::Location::caller();
        let origin = Origin { function: std::any::type_name::<H>(), file: location.file(), line: location.line() };
        Registration::built::<K, H, Args>(key, origin, handler, options)
    }

    /// A registration from its parts: what the attribute macros make, with
    /// the origin they read off the function. The attributes check what
    /// [`Registration::of`] checks (one body reader) themselves, spanned at
    /// the arguments.
    pub(crate) fn built<K, H, Args>(key: HandlerKey, origin: Origin, handler: H, options: K::Options) -> Self
    where
        K: Kind,
        H: Handler<K, Args>,
        Args: 'static,
    {
        Registration::from_endpoint(
            key,
            K::KIND,
            origin,
            pipeline::endpoint::<K, H, Args>(handler, options),
            H::needs(),
        )
    }

    /// A registration of `endpoint`, a handler of `kind` bound to `key`: its
    /// tag checked against the kind's form and normalised.
    fn from_endpoint(
        key: HandlerKey,
        kind: HandlerKind,
        origin: Origin,
        endpoint: Arc<dyn Endpoint>,
        needs: Needs,
    ) -> Self {
        let (key, tag_error) = match key {
            HandlerKey::Tag(tag) => match parse_tag(tag_kind(kind), &tag) {
                Ok(normalised) => (HandlerKey::Tag(normalised.tag), None),
                Err(error) => (HandlerKey::Tag(tag), Some(error)),
            },
            name => (name, None),
        };
        Registration {
            key,
            kind,
            max_concurrent: None,
            origin,
            endpoint,
            needs,
            layers: Vec::new(),
            guards: Vec::new(),
            tag_error,
        }
    }

    /// A tower service of `http::Request`s, such as an axum `Router`,
    /// serving the HTTP events of `key`, registered from the caller's
    /// source location. [`App::service`](crate::App::service) registers one
    /// service for several tags; this is for one tag with layers or guards
    /// of its own (`.guard("jwt")`), added with
    /// [`App::register`](crate::App::register). See
    /// [`HttpService`](crate::http::HttpService) for what the service gets.
    #[track_caller]
    pub fn service<S: HttpService>(key: HandlerKey, service: S) -> Self {
        let location = std::panic::Location::caller();
        let origin = Origin { function: std::any::type_name::<S>(), file: location.file(), line: location.line() };
        Registration::from_endpoint(key, HandlerKind::Http, origin, service.__endpoint().0, Needs::default())
    }

    /// An HTTP handler bound to `key` (a tag such as `GET::/orders/{id}`, or
    /// a name), registered from the caller's source location.
    ///
    /// ```
    /// use celerity::{HandlerKey, Registration};
    /// async fn hello() -> &'static str { "hello" }
    /// let registration = Registration::http(HandlerKey::Tag("GET::/hello".into()), hello);
    /// assert_eq!(registration.key(), &HandlerKey::Tag("GET::/hello".into()));
    /// ```
    #[track_caller]
    pub fn http<H: HttpHandler<Args>, Args: 'static>(key: HandlerKey, handler: H) -> Self {
        Registration::of::<Http, H, Args>(key, handler)
    }

    /// A WebSocket handler bound to `key` (a tag such as `event::$default`,
    /// or a name), registered from the caller's source location.
    ///
    /// ```
    /// use celerity::{HandlerKey, HandlerKind, Registration};
    /// async fn on_connect() {}
    /// let registration = Registration::websocket(HandlerKey::Tag("event::$connect".into()), on_connect);
    /// assert_eq!(registration.kind(), HandlerKind::WebSocket);
    /// ```
    #[track_caller]
    pub fn websocket<H: WebSocketHandler<Args>, Args: 'static>(key: HandlerKey, handler: H) -> Self {
        Registration::of::<WebSocket, H, Args>(key, handler)
    }

    /// A consumer handler bound to `key` (a tag such as
    /// `source::orders-queue::processOrders`, or a name) that runs for each
    /// record of a batch, in order, one at a time.
    ///
    /// ```
    /// use celerity::consumer::RawRecord;
    /// use celerity::{HandlerKey, HandlerKind, Registration};
    /// async fn process(_record: RawRecord) {}
    /// let registration = Registration::consumer(HandlerKey::Name("processOrders".into()), process);
    /// assert_eq!(registration.kind(), HandlerKind::Consumer);
    /// ```
    #[track_caller]
    pub fn consumer<H: ConsumerHandler<Args>, Args: 'static>(key: HandlerKey, handler: H) -> Self {
        Registration::of::<PerRecord, H, Args>(key, handler)
    }

    /// A consumer handler that runs for each record of a batch, up to
    /// `concurrency` records at once (each on its own task; the answer still
    /// names each failed record by its id).
    #[track_caller]
    pub fn consumer_concurrent<H: ConsumerHandler<Args>, Args: 'static>(
        key: HandlerKey,
        concurrency: usize,
        handler: H,
    ) -> Self {
        Registration::of_with::<PerRecord, H, Args>(key, handler, RecordOptions::concurrency(concurrency))
    }

    /// A consumer handler that takes the whole batch.
    #[track_caller]
    pub fn consumer_batch<H: ConsumerBatchHandler<Args>, Args: 'static>(key: HandlerKey, handler: H) -> Self {
        Registration::of::<WholeBatch, H, Args>(key, handler)
    }

    /// A schedule handler bound to `key` (a tag such as
    /// `source::nightly::cleanup`, or a name).
    #[track_caller]
    pub fn schedule<H: ScheduleHandler<Args>, Args: 'static>(key: HandlerKey, handler: H) -> Self {
        Registration::of::<Schedule, H, Args>(key, handler)
    }

    /// A custom handler bound to `key` (a tag such as `custom::resizeImage`,
    /// or a name).
    #[track_caller]
    pub fn custom<H: CustomHandler<Args>, Args: 'static>(key: HandlerKey, handler: H) -> Self {
        Registration::of::<Custom, H, Args>(key, handler)
    }

    /// Sets the per-tag cap: at most `max` events for this handler at once.
    pub fn max_concurrent(mut self, max: u32) -> Self {
        self.max_concurrent = Some(max.max(1));
        self
    }

    /// Adds a layer around this handler alone, inside the application's
    /// and its kind's (see [`crate::layer`]). Layers added first are
    /// outermost.
    ///
    /// ```
    /// use celerity::layer::{self, Event, Next};
    /// use celerity::{HandlerKey, Registration};
    ///
    /// async fn hello() -> &'static str { "hello" }
    /// let logged = layer::from_fn(|event: Event, next: Next| async move {
    ///     eprintln!("serving {}", event.tag());
    ///     next.run(event).await
    /// });
    /// let registration = Registration::http(HandlerKey::Tag("GET::/hello".into()), hello).layer(logged);
    /// # drop(registration);
    /// ```
    pub fn layer<L: EventLayer>(mut self, layer: L) -> Self {
        self.layers.push(Step::event(layer));
        self
    }

    /// Adds a tower layer over `http::Request`s around this handler alone,
    /// such as one from `tower-http` (see [`crate::layer`]). It sees HTTP
    /// events only: on a handler of another kind it does nothing.
    pub fn http_layer<L: HttpLayer>(mut self, layer: L) -> Self {
        self.layers.push(Step::http(layer));
        self
    }

    /// Protects this handler with the guard registered as `name` (see
    /// [`crate::guard`]). Several guards run in the order named, and all
    /// must allow.
    ///
    /// ```
    /// use celerity::{HandlerKey, Registration};
    /// async fn reports() -> &'static str { "[]" }
    /// let registration = Registration::http(HandlerKey::Tag("GET::/reports".into()), reports).guard("jwt");
    /// assert_eq!(registration.guard_names(), ["jwt"]);
    /// ```
    pub fn guard(mut self, name: impl Into<String>) -> Self {
        self.guards.push(name.into());
        self
    }

    /// The guards protecting it, in order.
    pub fn guard_names(&self) -> &[String] {
        &self.guards
    }

    /// This registration, served behind `layers` (the application's and its
    /// kind's), then its own layers, then `guard`.
    pub(crate) fn layered(&self, layers: &Layers, guard: Option<Step>, limit: usize) -> Registration {
        let mut layered = self.clone();
        let endpoint = self.endpoint.with_limit(limit).unwrap_or_else(|| Arc::clone(&self.endpoint));
        layered.endpoint = layers.around(self.kind, &self.layers, guard, &endpoint, limit);
        layered.layers = Vec::new();
        layered
    }

    /// Sets where the handler came from.
    pub fn origin(mut self, origin: Origin) -> Self {
        self.origin = origin;
        self
    }

    /// How the handler is bound: a tag normalised to the runtime's form, or a
    /// name.
    pub fn key(&self) -> &HandlerKey {
        &self.key
    }

    /// What it serves.
    pub fn kind(&self) -> HandlerKind {
        self.kind
    }

    /// Where it came from.
    pub fn origin_info(&self) -> Origin {
        self.origin
    }

    /// Its per-tag cap.
    pub fn cap(&self) -> Option<u32> {
        self.max_concurrent
    }

    /// What the protocol core needs to know of it.
    pub(crate) fn spec(&self) -> HandlerSpec {
        HandlerSpec {
            key: self.key.clone(),
            kind: self.kind,
            max_concurrent: self.max_concurrent,
            name: self.origin.function.to_string(),
            label: self.origin.to_string(),
            route: self.needs.route.clone(),
        }
    }

    /// Runs the handler for one dispatched event's source: its answer, or
    /// the answer to its panic; an error when the source does not decode.
    pub(crate) fn start(
        &self,
        source: Option<LazySource>,
        cx: Context,
    ) -> impl Future<Output = Result<crate::reply::Reply, prost::DecodeError>> + Send + 'static {
        pipeline::start(Arc::clone(&self.endpoint), source, cx)
    }
}

/// One registration of `service` for each of `tags`, all from `location`.
pub(crate) fn service_registrations<S, T>(
    tags: T,
    service: S,
    location: &'static std::panic::Location<'static>,
) -> Vec<Registration>
where
    S: HttpService + Clone,
    T: IntoIterator,
    T::Item: AsRef<str>,
{
    tags.into_iter()
        .map(|tag| {
            let registration = Registration::service(HandlerKey::Tag(tag.as_ref().to_string()), service.clone());
            let origin = Origin { file: location.file(), line: location.line(), ..registration.origin };
            registration.origin(origin)
        })
        .collect()
}

/// The tag grammar of a kind.
pub(crate) fn tag_kind(kind: HandlerKind) -> TagKind {
    match kind {
        HandlerKind::Http => TagKind::Http,
        HandlerKind::WebSocket => TagKind::WebSocket,
        HandlerKind::Consumer => TagKind::Consumer,
        HandlerKind::Schedule => TagKind::Schedule,
        HandlerKind::Custom => TagKind::Custom,
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("key", &self.key)
            .field("kind", &self.kind)
            .field("max_concurrent", &self.max_concurrent)
            .field("origin", &self.origin)
            .finish()
    }
}

/// Registrations made at compile time by the attribute macros. Each entry
/// builds its registration when the application starts.
#[linkme::distributed_slice]
pub static HANDLERS: [fn() -> Registration];

/// Why a binary's handlers cannot be served: found before it connects, and
/// before it prints its manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryError {
    /// A handler's tag does not fit its kind.
    MalformedTag {
        /// The tag as written.
        tag: String,
        /// The handler.
        origin: Origin,
        /// What is wrong with it, as the attribute says it.
        error: TagError,
    },
    /// Two handlers are bound the same way.
    Duplicate(DuplicateHandler),
    /// A handler's arguments cannot be taken from its route: a `Path<T>`
    /// reading other parameters than the route has.
    RouteMismatch {
        /// The tag.
        tag: String,
        /// The handler.
        origin: Origin,
        /// What does not fit.
        problem: String,
    },
    /// A handler takes `State<T>` of a type the application never provided.
    MissingState {
        /// The handler.
        origin: Origin,
        /// The type of the state.
        type_name: &'static str,
    },
    /// A handler names a guard the application never registered.
    UnknownGuard {
        /// The handler.
        origin: Origin,
        /// Its tag or name.
        key: String,
        /// The guard it names.
        guard: String,
        /// The guards the application has.
        known: Vec<String>,
    },
    /// A guard is registered twice under one name.
    DuplicateGuard {
        /// The name.
        name: String,
    },
    /// A guard is named on a handler whose events carry no caller.
    GuardOnUnguardable {
        /// The handler.
        origin: Origin,
        /// Its kind.
        kind: HandlerKind,
        /// The guard named.
        guard: String,
    },
    /// A handler takes `Identity<T>` and no guard protects it.
    IdentityWithoutGuard {
        /// The handler.
        origin: Origin,
        /// The identity's type.
        type_name: &'static str,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::MalformedTag { tag, origin, error } => {
                write!(f, "handler {origin} has the tag {tag:?}: {error}")
            }
            RegistryError::Duplicate(duplicate) => duplicate.fmt(f),
            RegistryError::RouteMismatch { tag, origin, problem } => {
                write!(f, "handler {origin} cannot serve {tag}: {problem}")
            }
            RegistryError::MissingState { origin, type_name } => write!(
                f,
                "handler {origin} takes State<{type_name}>, which the application never provided: give it with App::state"
            ),
            RegistryError::UnknownGuard { origin, key, guard, known } => {
                write!(
                    f,
                    "handler {origin} ({key}) is protected by the guard {guard:?}, which the application never registered: "
                )?;
                if known.is_empty() {
                    write!(f, "it registers no guards; add one with App::guard({guard:?}, ...)")
                } else {
                    let known: Vec<String> = known.iter().map(|name| format!("{name:?}")).collect();
                    write!(f, "its guards are {}", known.join(", "))
                }
            }
            RegistryError::DuplicateGuard { name } => {
                write!(f, "the guard {name:?} is registered twice; a guard name must have exactly one guard")
            }
            RegistryError::GuardOnUnguardable { origin, kind, guard } => write!(
                f,
                "handler {origin} is a {kind} handler protected by the guard {guard:?}, but {kind} events carry no caller to authorise: guards protect HTTP, WebSocket and custom handlers"
            ),
            RegistryError::IdentityWithoutGuard { origin, type_name } => write!(
                f,
                "handler {origin} takes Identity<{type_name}>, but no guard protects it to give one: name its guard, as in `guard = \"...\"`"
            ),
        }
    }
}

impl std::error::Error for RegistryError {}

/// Two registrations bound the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateHandler {
    /// The tag or name both use.
    pub key: HandlerKey,
    /// One.
    pub first: Origin,
    /// The other.
    pub second: Origin,
}

impl fmt::Display for DuplicateHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "two handlers are registered for {}: {} and {}; a tag must have exactly one handler",
            self.key, self.first, self.second
        )
    }
}

impl std::error::Error for DuplicateHandler {}

/// Checks that every tag fits its kind and that no two registrations are
/// bound the same way (tags compared in their normal form).
pub(crate) fn check(registrations: &[Registration]) -> Result<(), RegistryError> {
    for registration in registrations {
        if let (Some(error), HandlerKey::Tag(tag)) = (&registration.tag_error, &registration.key) {
            return Err(RegistryError::MalformedTag {
                tag: tag.clone(),
                origin: registration.origin,
                error: error.clone(),
            });
        }
    }
    let mut seen: HashMap<&HandlerKey, Origin> = HashMap::new();
    for registration in registrations {
        if let Some(first) = seen.insert(&registration.key, registration.origin) {
            return Err(RegistryError::Duplicate(DuplicateHandler {
                key: registration.key.clone(),
                first,
                second: registration.origin,
            }));
        }
    }
    registrations.iter().try_for_each(check_route)
}

/// Checks that a handler bound by tag can take its arguments from the tag's
/// route. (One bound by name learns its tag at the handshake, and is
/// checked there, before `Ready`.)
fn check_route(registration: &Registration) -> Result<(), RegistryError> {
    let HandlerKey::Tag(tag) = &registration.key else {
        return Ok(());
    };
    if registration.kind != HandlerKind::Http {
        return Ok(());
    }
    crate::session::route_fits(&registration.needs.route, tag).map_err(|problem| RegistryError::RouteMismatch {
        tag: tag.clone(),
        origin: registration.origin,
        problem,
    })
}

/// Checks that the state every handler takes is in `state`.
pub(crate) fn check_state(registrations: &[Registration], state: &StateMap) -> Result<(), RegistryError> {
    for registration in registrations {
        for need in &registration.needs.states {
            if !state.contains(need.type_id) {
                return Err(RegistryError::MissingState { origin: registration.origin, type_name: need.type_name });
            }
        }
    }
    Ok(())
}

/// The compile-time registrations, in a stable order (by source location).
pub(crate) fn compiled() -> Vec<Registration> {
    let mut registrations: Vec<Registration> = HANDLERS.iter().map(|make| make()).collect();
    registrations.sort_by(|a, b| (a.origin.file, a.origin.line).cmp(&(b.origin.file, b.origin.line)));
    registrations
}

/// Checks the handlers' resources against the links and binds their typed
/// configuration, so that a missing resource or a value that does not fit
/// stops the application at its start, naming the handler.
pub(crate) async fn prepare(config: &Configuration, registrations: &[Registration]) -> Result<(), Error> {
    let resources = config.resources();
    for registration in registrations {
        for (kind, name) in &registration.needs.resources {
            resources.find(kind.clone(), *name).map_err(|error| {
                Error::typed(
                    "ResourceError",
                    format!("the handler {} takes a resource that cannot be found: {error}", registration.origin),
                )
            })?;
        }
    }
    let mut primed = Vec::new();
    for registration in registrations {
        for need in &registration.needs.configs {
            if primed.contains(&need.key) {
                continue;
            }
            (need.prime)(config).await.map_err(|error| {
                Error::typed(
                    "ConfigError",
                    format!(
                        "the handler {} takes Config<{}>, which cannot be bound: {error}",
                        registration.origin, need.type_name
                    ),
                )
            })?;
            primed.push(need.key);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn first() {}
    async fn second() {}

    fn tag(tag: &str) -> HandlerKey {
        HandlerKey::Tag(tag.to_string())
    }

    #[test]
    fn a_tag_is_kept_in_the_runtimes_form() {
        let registration = Registration::http(tag("GET::/files/{path+}"), first);
        assert_eq!(registration.key(), &tag("GET::/files/{*path}"));
        assert_eq!(Registration::custom(HandlerKey::Name("x+".into()), first).key(), &HandlerKey::Name("x+".into()));
    }

    #[test]
    fn a_catch_all_written_either_way_is_one_tag_and_a_duplicate() {
        let registrations =
            [Registration::http(tag("GET::/f/{p+}"), first), Registration::http(tag("GET::/f/{*p}"), second)];
        match check(&registrations) {
            Err(RegistryError::Duplicate(duplicate)) => {
                assert_eq!(duplicate.key, tag("GET::/f/{*p}"));
                assert_eq!(
                    (duplicate.first.line, duplicate.second.line),
                    (registrations[0].origin.line, registrations[1].origin.line)
                );
            }
            other => panic!("expected a duplicate, got {other:?}"),
        }
    }

    #[test]
    fn a_malformed_tag_is_refused_with_the_sentence_the_attribute_gives() {
        let registrations =
            [Registration::http(tag("GET::/ok"), first), Registration::http(tag("get::orders"), second)];
        let error = check(&registrations).unwrap_err();
        let attribute = parse_tag(TagKind::Http, "get::orders").unwrap_err();
        assert!(matches!(&error, RegistryError::MalformedTag { tag, .. } if tag == "get::orders"), "{error:?}");
        let text = error.to_string();
        assert!(text.contains(&attribute.to_string()), "{text}");
        assert!(text.contains("registry::tests::second") && text.contains("registry.rs:"), "names the handler: {text}");
        // Checked against the handler's own kind.
        let error = check(&[Registration::websocket(tag("GET::/ok"), first)]).unwrap_err();
        assert!(error.to_string().contains("`#[websocket_handler]`"), "{error}");
        assert_eq!(check(&[Registration::websocket(tag("event::$connect"), first)]), Ok(()));
    }
}
