//! The one handler trait, implemented once over every arity for every kind.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use pin_project_lite::pin_project;

use super::{FromEvent, IntoAnswer, Kind, Needs};
use crate::context::Context;

/// A handler of kind `K`: an `async fn` (or a closure returning a future)
/// whose arguments are all [`FromEvent<K>`] and whose return value is
/// [`IntoAnswer<K>`]. `Args` is the tuple of its argument types.
///
/// Implemented for every such function of up to eight arguments; there is
/// no need to implement it by hand. Register a handler with the attribute
/// of its kind, or with [`crate::App::http`] and its siblings.
///
/// ```
/// use celerity::http::{Http, Path};
/// use celerity::Handler;
///
/// async fn get_order(Path(id): Path<u64>) -> String {
///     format!("order {id}")
/// }
///
/// fn is_http_handler<H: Handler<Http, Args>, Args>(_: &H) {}
/// is_http_handler(&get_order);
/// ```
pub trait Handler<K: Kind, Args>: Send + Sync + Sized + 'static {
    /// The future of one call: arguments taken, the function run, and its
    /// return value turned into the answer.
    type Future: Future<Output = K::Answer> + Send + 'static;

    /// How many of the arguments read the event's body
    /// ([`FromEvent::READS_BODY`]).
    const BODY_READERS: usize;

    /// Takes the arguments from `event` and calls the function. An argument
    /// that cannot be taken is answered with its rejection, and the
    /// function is not called.
    fn call(&self, event: K::Event, cx: &Context) -> Self::Future;

    /// What the arguments need before the handler can serve.
    #[doc(hidden)]
    fn needs() -> Needs {
        Needs::default()
    }
}

pin_project! {
    /// The future of one handler call: the function's own future, its
    /// output turned into the answer; or the answer to an argument that
    /// could not be taken.
    pub struct HandlerCall<K: Kind, Fut, R> {
        #[pin]
        state: CallState<K, Fut, R>,
    }
}

pin_project! {
    #[project = StateProjection]
    enum CallState<K: Kind, Fut, R> {
        // An argument could not be taken: the answer to it, until given.
        Rejected { answer: Option<K::Answer> },
        // The function is running.
        Running {
            #[pin]
            future: Fut,
            output: PhantomData<fn() -> R>,
        },
    }
}

impl<K: Kind, Fut, R> HandlerCall<K, Fut, R> {
    fn rejected(rejection: K::Rejection) -> Self {
        HandlerCall { state: CallState::Rejected { answer: Some(K::reject(rejection)) } }
    }

    fn running(future: Fut) -> Self {
        HandlerCall { state: CallState::Running { future, output: PhantomData } }
    }
}

impl<K, Fut, R> Future for HandlerCall<K, Fut, R>
where
    K: Kind,
    Fut: Future<Output = R>,
    R: IntoAnswer<K>,
{
    type Output = K::Answer;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<K::Answer> {
        match self.project().state.project() {
            // Polled once: a rejection is ready at once, and a future is
            // not polled again once it has given its output.
            StateProjection::Rejected { answer } => match answer.take() {
                Some(answer) => Poll::Ready(answer),
                None => Poll::Pending,
            },
            StateProjection::Running { future, .. } => future.poll(cx).map(IntoAnswer::into_answer),
        }
    }
}

impl<K, F, Fut, R> Handler<K, ()> for F
where
    K: Kind,
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoAnswer<K> + 'static,
{
    type Future = HandlerCall<K, Fut, R>;
    const BODY_READERS: usize = 0;

    fn call(&self, _event: K::Event, _cx: &Context) -> Self::Future {
        HandlerCall::running(self())
    }
}

macro_rules! impl_handler {
    ($($arg:ident),*; $last:ident) => {
        impl<K, F, Fut, R, $($arg,)* $last> Handler<K, ($($arg,)* $last,)> for F
        where
            K: Kind,
            F: Fn($($arg,)* $last) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoAnswer<K> + 'static,
            $($arg: FromEvent<K> + Send + 'static,)*
            $last: FromEvent<K> + Send + 'static,
        {
            type Future = HandlerCall<K, Fut, R>;
            const BODY_READERS: usize = 0 $(+ $arg::READS_BODY as usize)* + $last::READS_BODY as usize;

            #[allow(non_snake_case, unused_mut)]
            fn call(&self, mut event: K::Event, cx: &Context) -> Self::Future {
                $(
                    let $arg = match $arg::from_event(&mut event, cx) {
                        Ok(value) => value,
                        Err(rejection) => return HandlerCall::rejected(rejection),
                    };
                )*
                let $last = match $last::from_event_owned(event, cx) {
                    Ok(value) => value,
                    Err(rejection) => return HandlerCall::rejected(rejection),
                };
                HandlerCall::running(self($($arg,)* $last))
            }

            fn needs() -> Needs {
                let mut needs = Needs::default();
                $($arg::needs(&mut needs);)*
                $last::needs(&mut needs);
                needs
            }
        }
    };
}

impl_handler!(; A1);
impl_handler!(A1; A2);
impl_handler!(A1, A2; A3);
impl_handler!(A1, A2, A3; A4);
impl_handler!(A1, A2, A3, A4; A5);
impl_handler!(A1, A2, A3, A4, A5; A6);
impl_handler!(A1, A2, A3, A4, A5, A6; A7);
impl_handler!(A1, A2, A3, A4, A5, A6, A7; A8);
