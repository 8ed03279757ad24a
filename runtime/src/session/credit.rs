//! The credit window as this process sees it.
//!
//! The runtime holds one credit window per stream. It spends a place on every
//! dispatch and gets one back only when we grant it, either on a `Result`
//! (`credit_grant`) or with a `CreditGrant` frame. A `Result` with a grant of
//! zero asks the runtime to withhold: it stops dispatching to this stream until
//! a later `CreditGrant` arrives.
//!
//! [`Credit`] tracks the window the runtime believes it has, the window we want
//! it to have, and whether we have asked it to withhold. Our count is always at
//! least as generous as the runtime's (a grant we send counts here before it
//! arrives there), so a dispatch that finds no room in it is a real
//! over-dispatch and not a race.

/// The credit window and the requests made of it.
///
/// The invariant it keeps, which the session's property test checks against
/// a model of the runtime: the runtime's window (places free plus places
/// held) is always [`Credit::window`] less [`Credit::owed`], and the runtime
/// is withholding exactly when [`Credit::is_paused`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credit {
    /// Places the runtime believes this stream has in all: free ones plus the
    /// ones held by events in flight (less `owed`).
    window: u32,
    /// The window we want. Below `window`, the next results withhold their
    /// grants until the two meet.
    target: u32,
    /// We sent a zero grant and no `CreditGrant` since: the runtime is not
    /// dispatching.
    paused: bool,
    /// The application asked to withhold; the next result carries zero.
    withhold_requested: bool,
    /// The pause is the application's: only [`Credit::resume`] ends it.
    user_withheld: bool,
    /// Places the runtime spent on dispatches this process could neither
    /// hold nor answer (no id, or an id already in flight) while it was
    /// paused. They go back with the next `CreditGrant`, which is the only
    /// way to return them; sending one earlier would end the withhold. Only
    /// ever non-zero while `window <= target`.
    owed: u32,
}

impl Credit {
    /// A window of `initial` places, as declared in `Ready`.
    pub fn new(initial: u32) -> Self {
        Credit {
            window: initial,
            target: initial,
            paused: false,
            withhold_requested: false,
            user_withheld: false,
            owed: 0,
        }
    }

    /// Places the runtime believes this stream has in all, plus [`Credit::owed`].
    pub fn window(&self) -> u32 {
        self.window
    }

    /// The window this process wants.
    pub fn target(&self) -> u32 {
        self.target
    }

    /// Places owed to the runtime, returned with the next `CreditGrant`.
    pub fn owed(&self) -> u32 {
        self.owed
    }

    /// Whether the runtime has been asked to withhold and not yet resumed.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Whether the application has withheld, or asked to, and not resumed.
    pub fn is_withheld_by_application(&self) -> bool {
        self.user_withheld || self.withhold_requested
    }

    /// Whether one more event may be in flight, given how many already are.
    pub fn has_room(&self, in_flight: usize) -> bool {
        (in_flight as u64) < u64::from(self.window)
    }

    /// Sets the window to declare in `Ready`, before it is sent. A withhold
    /// already asked for stays asked for.
    pub fn declare(&mut self, initial: u32) {
        self.window = initial;
        self.target = initial;
    }

    /// The grant to put on the next result. Zero only when withholding
    /// deliberately: an application withhold, or a shrink in progress.
    pub fn grant_for_result(&mut self) -> u32 {
        if self.withhold_requested && self.window > 0 {
            self.withhold_requested = false;
            self.user_withheld = true;
            self.paused = true;
            self.window -= 1;
            return 0;
        }
        if self.window > self.target {
            self.window -= 1;
            self.paused = true;
            return 0;
        }
        1
    }

    /// A dispatch took a place but cannot be answered with a `Result` (it
    /// had no id, or its id is already in flight). Returns the `CreditGrant`
    /// to send to give the place back, or `None` when it is kept: towards a
    /// shrink in progress, or owed until the next `CreditGrant` while the
    /// runtime is paused (a grant now would end the withhold).
    pub fn return_unanswered(&mut self) -> Option<u32> {
        if self.window > self.target {
            self.window -= 1;
            return None;
        }
        if self.paused {
            self.owed += 1;
            return None;
        }
        Some(1)
    }

    /// After a shrink has withheld what it could, the runtime must be told to
    /// dispatch again: returns the `CreditGrant` amount to send (zero: it
    /// ends the withhold without adding places). `in_flight` is the number of
    /// events still held, which are the only results left to withhold on.
    pub fn resume_after_shrink(&mut self, in_flight: usize) -> Option<u32> {
        if self.paused && !self.user_withheld && (self.window <= self.target || in_flight == 0) {
            return Some(self.unpause());
        }
        None
    }

    /// The application asks the runtime to stop dispatching. Takes effect on
    /// the next result, which carries a grant of zero.
    pub fn withhold(&mut self) {
        if !self.user_withheld {
            self.withhold_requested = true;
        }
    }

    /// The application ends its withhold. Returns the `CreditGrant` amount
    /// to send, which gives back the places the withhold took (and grows the
    /// window to a size set meanwhile), or `None` when nothing needs sending
    /// (the withhold had not reached the wire yet).
    pub fn resume(&mut self) -> Option<u32> {
        if self.withhold_requested {
            self.withhold_requested = false;
            return None;
        }
        if !self.user_withheld {
            return None;
        }
        self.user_withheld = false;
        Some(self.unpause())
    }

    /// Sets the window this process wants (at least one place). Growing
    /// returns the `CreditGrant` amount to send now, which also ends a
    /// shrink's pause; shrinking happens on the next results. While the
    /// application's withhold is in force, nothing is sent: the new size is
    /// granted when it resumes, so a resize never ends a deliberate withhold
    /// (and one asked for still goes out on the next result).
    pub fn resize(&mut self, target: u32) -> Option<u32> {
        self.target = target.max(1);
        // Places owed count towards a shrink: the runtime's window is
        // already smaller by them. So a shrink is never withheld for twice.
        let absorbed = self.owed.min(self.window.saturating_sub(self.target));
        self.window -= absorbed;
        self.owed -= absorbed;
        if self.user_withheld {
            return None;
        }
        if self.target > self.window || (self.paused && self.target >= self.window) {
            return Some(self.unpause());
        }
        None
    }

    /// Ends a pause: grows the window back to the target and returns the
    /// `CreditGrant` amount, which also carries the places owed.
    fn unpause(&mut self) -> u32 {
        self.paused = false;
        let add = self.target.saturating_sub(self.window);
        self.window += add;
        add + std::mem::take(&mut self.owed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_grant_one_place_each() {
        let mut credit = Credit::new(4);
        assert_eq!(credit.grant_for_result(), 1);
        assert_eq!(credit.window(), 4);
        assert!(!credit.is_paused());
    }

    #[test]
    fn room_is_the_window_less_what_is_in_flight() {
        let credit = Credit::new(2);
        assert!(credit.has_room(0));
        assert!(credit.has_room(1));
        assert!(!credit.has_room(2));
    }

    #[test]
    fn withhold_takes_one_place_until_resumed() {
        let mut credit = Credit::new(4);
        credit.withhold();
        assert_eq!(credit.grant_for_result(), 0);
        assert_eq!(credit.window(), 3);
        assert!(credit.is_paused());
        // Later results return their places, the runtime stays paused.
        assert_eq!(credit.grant_for_result(), 1);
        assert_eq!(credit.resume_after_shrink(0), None);
        assert_eq!(credit.resume(), Some(1));
        assert_eq!(credit.window(), 4);
        assert!(!credit.is_paused());
    }

    #[test]
    fn resume_before_any_result_sends_nothing() {
        let mut credit = Credit::new(4);
        credit.withhold();
        assert_eq!(credit.resume(), None);
        assert_eq!(credit.grant_for_result(), 1);
    }

    #[test]
    fn resume_without_withhold_sends_nothing() {
        let mut credit = Credit::new(4);
        assert_eq!(credit.resume(), None);
    }

    #[test]
    fn shrink_withholds_until_the_window_meets_the_target() {
        let mut credit = Credit::new(4);
        assert_eq!(credit.resize(2), None);
        assert_eq!(credit.grant_for_result(), 0);
        assert_eq!(credit.resume_after_shrink(3), None);
        assert_eq!(credit.grant_for_result(), 0);
        assert_eq!(credit.window(), 2);
        assert_eq!(credit.resume_after_shrink(2), Some(0));
        assert!(!credit.is_paused());
        assert_eq!(credit.grant_for_result(), 1);
    }

    #[test]
    fn shrink_resumes_when_nothing_is_left_to_withhold_on() {
        let mut credit = Credit::new(4);
        credit.resize(1);
        assert_eq!(credit.grant_for_result(), 0);
        assert_eq!(credit.resume_after_shrink(0), Some(0));
        assert_eq!(credit.window(), 3);
        // The next result carries on shrinking.
        assert_eq!(credit.grant_for_result(), 0);
        assert_eq!(credit.window(), 2);
    }

    #[test]
    fn growing_sends_the_difference() {
        let mut credit = Credit::new(2);
        assert_eq!(credit.resize(5), Some(3));
        assert_eq!(credit.window(), 5);
        assert!(!credit.is_paused());
    }

    #[test]
    fn growing_during_a_withhold_waits_for_the_resume() {
        let mut credit = Credit::new(2);
        credit.withhold();
        assert_eq!(credit.grant_for_result(), 0);
        assert_eq!(credit.resize(5), None, "a resize must not end a deliberate withhold");
        assert!(credit.is_paused());
        assert_eq!(credit.resume(), Some(4));
        assert_eq!(credit.window(), 5);
        assert!(!credit.is_paused());
    }

    #[test]
    fn a_withhold_asked_for_survives_a_resize() {
        let mut credit = Credit::new(2);
        credit.withhold();
        assert_eq!(credit.resize(3), Some(1));
        assert_eq!(credit.grant_for_result(), 0, "the withhold still goes out on the next result");
        assert_eq!(credit.resume(), Some(1));
        assert_eq!(credit.window(), 3);
    }

    #[test]
    fn an_unanswerable_dispatch_is_owed_while_paused() {
        let mut credit = Credit::new(2);
        credit.withhold();
        credit.grant_for_result();
        assert_eq!(credit.return_unanswered(), None, "a CreditGrant now would end the withhold");
        assert_eq!(credit.owed(), 1);
        assert_eq!(credit.resume(), Some(2));
        assert_eq!(credit.owed(), 0);
    }

    #[test]
    fn an_unanswerable_dispatch_counts_towards_a_shrink() {
        let mut credit = Credit::new(4);
        credit.resize(3);
        assert_eq!(credit.return_unanswered(), None);
        assert_eq!(credit.window(), 3);
        assert_eq!(credit.return_unanswered(), Some(1));
    }

    #[test]
    fn the_window_declared_before_ready_replaces_the_initial_one() {
        let mut credit = Credit::new(4);
        credit.withhold();
        credit.declare(2);
        assert_eq!((credit.window(), credit.target()), (2, 2));
        assert!(credit.is_withheld_by_application());
    }

    #[test]
    fn resize_has_a_floor_of_one() {
        let mut credit = Credit::new(2);
        credit.resize(0);
        assert_eq!(credit.target(), 1);
    }
}
