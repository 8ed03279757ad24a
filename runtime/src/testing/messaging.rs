//! In-memory queues and topics, standing in for the blueprint's in tests.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::future::BoxFuture;
use crate::resources::Fault;
use crate::resources::batch::{Chunking, EntryOutcome};
use crate::resources::message_rules::AWS_CHUNKING;
use crate::resources::sending::{Backend, Outgoing};

/// Keeps what is sent, in order. It holds messages to the rules the real
/// backends hold them to, and sends a batch in requests of SQS's and SNS's
/// size, so that a handler that passes with it passes deployed.
pub(crate) struct Memory<M> {
    messages: Mutex<Vec<M>>,
    next_id: AtomicU64,
    unreachable: AtomicBool,
}

impl<M: Outgoing + Clone> Memory<M> {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Memory {
            messages: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(0),
            unreachable: AtomicBool::new(false),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Vec<M>> {
        self.messages.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn messages(&self) -> Vec<M> {
        self.lock().clone()
    }

    pub(crate) fn take(&self) -> Vec<M> {
        std::mem::take(&mut *self.lock())
    }

    pub(crate) fn count(&self) -> usize {
        self.lock().len()
    }

    pub(crate) fn set_unreachable(&self, unreachable: bool) {
        self.unreachable.store(unreachable, Ordering::Relaxed);
    }

    fn refuse_when_unreachable(&self) -> Result<(), Fault> {
        if self.unreachable.load(Ordering::Relaxed) {
            return Err(Fault::unreachable("the stand-in is set unreachable"));
        }
        Ok(())
    }

    fn keep(&self, message: &M) -> String {
        self.lock().push(message.clone());
        format!("test-{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

impl<M: Outgoing + Clone> Backend<M> for Memory<M> {
    fn send<'a>(&'a self, message: &'a M) -> BoxFuture<'a, Result<String, Fault>> {
        Box::pin(async move {
            self.refuse_when_unreachable()?;
            Ok(self.keep(message))
        })
    }

    fn chunking(&self) -> Chunking {
        AWS_CHUNKING
    }

    fn send_chunk<'a>(&'a self, messages: Vec<&'a M>) -> BoxFuture<'a, Result<Vec<EntryOutcome>, Fault>> {
        Box::pin(async move {
            self.refuse_when_unreachable()?;
            Ok(messages.into_iter().map(|message| EntryOutcome::Sent(self.keep(message))).collect())
        })
    }
}

/// Declares an in-memory stand-in for a kind of resource that sends
/// messages: the type, its handle and what it keeps.
macro_rules! stand_in {
    (
        $(#[$doc:meta])*
        $feature:literal, $name:ident, $handle:ty, $message:ty, $accessor:ident
    ) => {
        $(#[$doc])*
        #[cfg(feature = $feature)]
        #[derive(Clone)]
        pub struct $name {
            handle: $handle,
            memory: Arc<Memory<$message>>,
        }

        #[cfg(feature = $feature)]
        impl $name {
            /// An empty stand-in for the blueprint's resource `name`.
            pub fn new(name: &str) -> Self {
                let memory = Memory::new();
                let handle = <$handle>::with_backend(name, Arc::clone(&memory) as Arc<dyn Backend<$message>>);
                $name { handle, memory }
            }

            /// The handle handlers take: give it to
            /// [`ConfigurationBuilder::resource`](crate::config::ConfigurationBuilder::resource).
            pub fn $accessor(&self) -> $handle {
                self.handle.clone()
            }

            /// The messages sent so far, in order.
            pub fn messages(&self) -> Vec<$message> {
                self.memory.messages()
            }

            /// The messages sent so far, taken out.
            pub fn take(&self) -> Vec<$message> {
                self.memory.take()
            }

            /// While `unreachable`, every send fails as a service that
            /// cannot be reached would
            /// ([`ResourceErrorKind::Unreachable`](crate::resources::ResourceErrorKind::Unreachable)),
            /// and a batch leaves its entries unsent.
            pub fn set_unreachable(&self, unreachable: bool) {
                self.memory.set_unreachable(unreachable);
            }
        }

        #[cfg(feature = $feature)]
        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("name", &self.handle.name())
                    .field("messages", &self.memory.count())
                    .finish()
            }
        }
    };
}

stand_in! {
    /// An in-memory queue for tests: what handlers send to it is kept, in
    /// order, to be read back. It holds messages to the rules of SQS and of
    /// a local session's queue (size, attributes, delay), and sends a batch
    /// in requests of SQS's size.
    ///
    /// ```
    /// use celerity::config::Configuration;
    /// use celerity::resources::queue::Queue;
    /// use celerity::testing::{TestQueue, TestRequest};
    ///
    /// async fn place(queue: Queue) -> celerity::Result<&'static str> {
    ///     queue.send("order placed").await?;
    ///     Ok("placed")
    /// }
    ///
    /// # celerity::testing::block_on(async {
    /// let orders = TestQueue::new("ordersQueue");
    /// let config = Configuration::builder().resource("ordersQueue", orders.queue()).build();
    /// let app = celerity::App::new()
    ///     .without_compiled_handlers()
    ///     .with_configuration(config)
    ///     .http("POST::/orders", place)
    ///     .into_test();
    /// let response = app.call("POST::/orders", TestRequest::post("/orders")).await.expect_http();
    /// assert_eq!(response.text(), "placed");
    /// assert_eq!(orders.messages()[0].text(), Some("order placed"));
    /// # });
    /// ```
    "queue", TestQueue, crate::resources::queue::Queue, crate::resources::queue::Message, queue
}

stand_in! {
    /// An in-memory topic for tests: what handlers publish to it is kept,
    /// in order, to be read back. It holds messages to the rules of SNS and
    /// of a local session's topic, and publishes a batch in requests of
    /// SNS's size.
    ///
    /// ```
    /// use celerity::config::Configuration;
    /// use celerity::resources::topic::{Message, Topic};
    /// use celerity::testing::{TestRequest, TestTopic};
    ///
    /// async fn announce(topic: Topic) -> celerity::Result<&'static str> {
    ///     topic.publish(Message::new("order placed").with_subject("orders")).await?;
    ///     Ok("announced")
    /// }
    ///
    /// # celerity::testing::block_on(async {
    /// let events = TestTopic::new("orderEvents");
    /// let config = Configuration::builder().resource("orderEvents", events.topic()).build();
    /// let app = celerity::App::new()
    ///     .without_compiled_handlers()
    ///     .with_configuration(config)
    ///     .http("POST::/announce", announce)
    ///     .into_test();
    /// let response = app.call("POST::/announce", TestRequest::post("/announce")).await.expect_http();
    /// assert_eq!(response.text(), "announced");
    /// assert_eq!(events.messages()[0].subject(), Some("orders"));
    /// # });
    /// ```
    "topic", TestTopic, crate::resources::topic::Topic, crate::resources::topic::Message, topic
}
