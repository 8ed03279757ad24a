//! A query or scan read through as one stream of items, page after page.

use std::collections::VecDeque;

use futures_util::Stream;

use super::Page;
use crate::resources::error::ResourceError;

/// Every item of the pages `fetch` answers, from `cursor` on.
pub(super) fn pages<T, F, Fut>(
    cursor: Option<String>,
    fetch: F,
) -> impl Stream<Item = Result<T, ResourceError>> + Send + 'static
where
    T: Send + 'static,
    F: Fn(Option<String>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<Page<T>, ResourceError>> + Send + 'static,
{
    struct State<T, F> {
        fetch: F,
        buffered: VecDeque<T>,
        next: Option<Option<String>>,
    }
    let state = State { fetch, buffered: VecDeque::new(), next: Some(cursor) };
    futures_util::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(item) = state.buffered.pop_front() {
                return Some((Ok(item), state));
            }
            let cursor = state.next.take()?;
            match (state.fetch)(cursor).await {
                Ok(page) => {
                    state.buffered.extend(page.items);
                    state.next = page.cursor.map(Some);
                }
                Err(error) => return Some((Err(error), state)),
            }
        }
    })
}
