//! Exact sliding windows for the bottleneck mechanism (docs/mechanisms.md, bottleneck §2): what a
//! client was entitled to, what each resource gave it and how busy each resource was, over the
//! last `window` microseconds.
//!
//! A window forgets all at once what leaves it, which no [`Decay`](super::decay::Decay) does, so
//! the mechanism keeps its own. These structures use what the mechanism guarantees — a client
//! is served by at most one resource at a time, at rate 1; entitlement rates change only when
//! clients come and go, all of them at once, in proportion to their entitlements — and answer
//! in integer microseconds (service) or as a difference of running integrals kept in
//! double-double precision (entitlement), with no drift however long the run. Reading costs
//! amortised O(1); time never goes backwards.

use crate::model::Time;
use crate::usage::ledger::LedgerError;
use std::collections::VecDeque;

/// Service a client received from each of several resources, one resource at a time.
#[derive(Debug, Clone)]
pub struct ServiceWindow {
    window: u64,
    now: u64,
    /// Closed service periods `(start, end, resource)` that ended inside the window at the
    /// last reading, oldest first; disjoint because service is one resource at a time.
    closed: VecDeque<(u64, u64, usize)>,
    /// Per resource: the total length of its periods in `closed`.
    inside: Vec<u64>,
    /// The period in progress: `(start, resource)`.
    open: Option<(u64, usize)>,
}

impl ServiceWindow {
    /// No service yet from any of `resources` resources, remembered over `window` µs.
    pub fn new(resources: usize, window: u64) -> ServiceWindow {
        ServiceWindow {
            window: window.max(1),
            now: 0,
            closed: VecDeque::new(),
            inside: vec![0; resources],
            open: None,
        }
    }

    /// From `t` on, resource `resource` serves the client (ending any service in progress).
    pub fn start(&mut self, t: Time, resource: usize) -> Result<(), LedgerError> {
        self.check_resource(resource)?;
        self.stop(t)?;
        self.open = Some((t.as_micros(), resource));
        Ok(())
    }

    /// From `t` on, no resource serves the client.
    pub fn stop(&mut self, t: Time) -> Result<(), LedgerError> {
        self.advance(t)?;
        if let Some((start, resource)) = self.open.take() {
            let end = t.as_micros();
            if end > start {
                self.inside[resource] += end - start;
                match self.closed.back_mut() {
                    // Back-to-back service from one resource is one period.
                    Some(last) if last.1 == start && last.2 == resource => last.1 = end,
                    _ => self.closed.push_back((start, end, resource)),
                }
            }
        }
        Ok(())
    }

    /// Microseconds of service from each resource in the window ending at `t`, into `out`.
    pub fn amounts(&mut self, t: Time, out: &mut [u64]) -> Result<(), LedgerError> {
        self.read_into(t, out, |micros| micros)
    }

    /// Seconds of service from each resource in the window ending at `t`, into `out`.
    pub fn seconds(&mut self, t: Time, out: &mut [f64]) -> Result<(), LedgerError> {
        self.read_into(t, out, |micros| micros as f64 / 1e6)
    }

    /// Every resource's reading at `t`, converted, into `out`: the closed totals in bulk, then
    /// the (at most two) resources whose periods cross an edge of the window.
    fn read_into<T>(
        &mut self,
        t: Time,
        out: &mut [T],
        convert: impl Fn(u64) -> T,
    ) -> Result<(), LedgerError> {
        self.check_length(out.len())?;
        self.advance(t)?;
        for (value, inside) in out.iter_mut().zip(&self.inside) {
            *value = convert(*inside);
        }
        for resource in self.edges() {
            out[resource] = convert(self.reading(resource));
        }
        Ok(())
    }

    /// The resources whose reading differs from their closed periods' total: the one whose
    /// oldest period may straddle the window's start, and the one serving now.
    fn edges(&self) -> impl Iterator<Item = usize> {
        let front = self.closed.front().map(|period| period.2);
        front
            .into_iter()
            .chain(self.open.map(|(_, resource)| resource))
    }

    /// Microseconds of service from `resource` in the window ending at `t`.
    pub fn amount(&mut self, t: Time, resource: usize) -> Result<u64, LedgerError> {
        self.check_resource(resource)?;
        self.advance(t)?;
        Ok(self.reading(resource))
    }

    /// Microseconds of service from `resource` in the window at the current time.
    fn reading(&self, resource: usize) -> u64 {
        let from = self.from();
        let mut amount = self.inside[resource];
        if let Some(&(start, _, r)) = self.closed.front() {
            if r == resource {
                amount -= from.saturating_sub(start);
            }
        }
        if let Some((start, r)) = self.open {
            if r == resource {
                amount += self.now - start.max(from);
            }
        }
        amount
    }

    /// The last instant up to which [`Self::amounts`] keeps its current reading if the client
    /// is neither served nor stopped meanwhile: the current time while service is in progress
    /// or an old period is leaving the window, else when the oldest period starts to leave.
    pub fn steady_until(&self) -> Time {
        match (self.open, self.closed.front()) {
            (Some(_), _) => Time(self.now),
            (None, None) => Time(u64::MAX),
            (None, Some(&(start, _, _))) => Time((start + self.window).max(self.now)),
        }
    }

    fn check_resource(&self, resource: usize) -> Result<(), LedgerError> {
        let resources = self.inside.len();
        if resource < resources {
            Ok(())
        } else {
            Err(LedgerError::NoSuchResource {
                resource,
                resources,
            })
        }
    }

    fn check_length(&self, found: usize) -> Result<(), LedgerError> {
        let expected = self.inside.len();
        if found == expected {
            Ok(())
        } else {
            Err(LedgerError::WrongLength { expected, found })
        }
    }

    /// The start of the window at the current time.
    fn from(&self) -> u64 {
        self.now.saturating_sub(self.window)
    }

    /// Moves to `t`, forgetting the periods that ended before the window.
    fn advance(&mut self, t: Time) -> Result<(), LedgerError> {
        let t = t.as_micros();
        if t < self.now {
            return Err(backwards(self.now, t));
        }
        self.now = t;
        let from = self.from();
        while let Some(&(start, end, resource)) = self.closed.front() {
            if end > from {
                break;
            }
            self.inside[resource] -= end - start;
            self.closed.pop_front();
        }
        Ok(())
    }
}

/// The integral over the window of a piecewise-constant rate, such as a client's renormalised
/// entitlement.
///
/// Each segment carries the running integral up to its start, kept as a double-double (a sum
/// of two `f64`s), so that the whole segments inside the window are one difference of two
/// running integrals — O(1) however many segments it spans — without the cancellation a plain
/// running sum would suffer once it grows large against the window.
#[derive(Debug, Clone)]
pub struct RateWindow {
    window: u64,
    now: u64,
    /// Every segment that may still overlap the window, oldest first; the rate is 0 before
    /// the first.
    segments: VecDeque<Segment>,
    /// The integral once one rate fills the whole window, kept until the rate changes.
    full: Option<f64>,
}

/// One constant-rate stretch of a [`RateWindow`].
#[derive(Debug, Clone, Copy)]
struct Segment {
    /// Its start, µs.
    start: u64,
    /// Its rate.
    rate: f64,
    /// The running integral (rate × µs) from the first segment's start to this one's, of
    /// exact products: read by difference anywhere inside a segment, it stays exact however
    /// long ago the segment began.
    before: DoubleDouble,
}

impl Segment {
    /// The running integral at `at`, inside this segment.
    fn running(&self, at: u64) -> DoubleDouble {
        self.before
            .plus(DoubleDouble::product(self.rate, (at - self.start) as f64))
    }
}

/// A number kept as an unevaluated sum `hi + lo` with `|lo| ≤ ulp(hi) / 2`: twice an `f64`'s
/// precision, for running sums that are read by difference.
#[derive(Debug, Clone, Copy, Default)]
struct DoubleDouble {
    hi: f64,
    lo: f64,
}

impl DoubleDouble {
    /// `a × b`, exactly (the product's rounding error found with a fused multiply-add).
    fn product(a: f64, b: f64) -> DoubleDouble {
        let hi = a * b;
        DoubleDouble {
            hi,
            lo: a.mul_add(b, -hi),
        }
    }

    /// `self + other`.
    fn plus(self, other: DoubleDouble) -> DoubleDouble {
        let (s, e) = two_sum(self.hi, other.hi);
        let (hi, lo) = two_sum(s, e + (self.lo + other.lo));
        DoubleDouble { hi, lo }
    }

    /// `self − other`, rounded to an `f64`.
    fn minus(self, other: DoubleDouble) -> f64 {
        let (s, e) = two_sum(self.hi, -other.hi);
        s + (e + (self.lo - other.lo))
    }
}

/// `a + b` and its rounding error, exactly (Knuth's TwoSum).
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

impl RateWindow {
    /// A zero rate so far, integrated over `window` µs.
    pub fn new(window: u64) -> RateWindow {
        RateWindow {
            window: window.max(1),
            now: 0,
            segments: VecDeque::new(),
            full: None,
        }
    }

    /// The current rate.
    pub fn rate(&self) -> f64 {
        self.segments.back().map_or(0.0, |s| s.rate)
    }

    /// From `t` on, the rate is `rate` (finite, non-negative).
    pub fn set(&mut self, t: Time, rate: f64) -> Result<(), LedgerError> {
        if !(rate.is_finite() && rate >= 0.0) {
            return Err(LedgerError::BadRate {
                expected: 1,
                found: vec![rate],
            });
        }
        self.advance(t)?;
        if rate != self.rate() {
            self.full = None;
            let now = self.now;
            let len = self.segments.len();
            let previous_rate = len.checked_sub(2).map(|k| self.segments[k].rate);
            match self.segments.back_mut() {
                // Set twice in one instant, back to the rate before: one segment again.
                Some(last) if last.start == now && previous_rate == Some(rate) => {
                    self.segments.pop_back();
                }
                Some(last) if last.start == now => last.rate = rate,
                last => {
                    let before = last.map_or(DoubleDouble::default(), |l| l.running(now));
                    self.segments.push_back(Segment {
                        start: now,
                        rate,
                        before,
                    });
                }
            }
        }
        Ok(())
    }

    /// The rate integrated over the window ending at `t`, in rate × seconds.
    pub fn integral(&mut self, t: Time) -> Result<f64, LedgerError> {
        self.advance(t)?;
        if let Some(full) = self.full {
            return Ok(full);
        }
        let (Some(first), Some(last)) = (self.segments.front(), self.segments.back()) else {
            return Ok(0.0);
        };
        let from = self.now.saturating_sub(self.window);
        if self.segments.len() == 1 {
            let integral = first.rate * (self.now - first.start.max(from)) as f64 / 1e6;
            if first.start + self.window <= self.now {
                self.full = Some(integral);
            }
            return Ok(integral);
        }
        // Not `running_now() − running_at_window_start()`, which reads the same: its two exact
        // products cost two fused multiply-adds, measured 1–4 % slower on the process engine.
        // `advance` left no segment wholly before the window, so the second and later ones
        // start inside it: the first one's part in the window, the whole segments from the
        // second to the last (a difference of running integrals), and the last one's part.
        // Every product is of a length within the window, however long ago the first began.
        let second = self.segments[1];
        let head = first.rate * (second.start - from.max(first.start)) as f64;
        let middle = last.before.minus(second.before);
        let tail = last.rate * (self.now - last.start) as f64;
        Ok((head + middle + tail) / 1e6)
    }

    /// The last instant up to which [`Self::integral`] keeps its current reading if the rate
    /// is not set meanwhile: forever once one rate has filled the whole window (or the rate has
    /// always been 0), else the current time.
    pub fn steady_until(&self) -> Time {
        let steady = match (self.segments.len(), self.segments.front()) {
            (0, _) => true,
            (1, Some(s)) => s.start + self.window <= self.now || s.rate == 0.0,
            _ => false,
        };
        Time(if steady { u64::MAX } else { self.now })
    }

    /// The running integral at the current time.
    fn running_now(&self) -> DoubleDouble {
        self.segments
            .back()
            .map_or(DoubleDouble::default(), |last| last.running(self.now))
    }

    /// The running integral at the start of the window (at the first segment's start if the
    /// window begins before it: the rate is 0 there).
    fn running_at_window_start(&self) -> DoubleDouble {
        let from = self.now.saturating_sub(self.window);
        self.segments
            .front()
            .map_or(DoubleDouble::default(), |first| {
                first.running(from.max(first.start))
            })
    }

    /// Moves to `t`, forgetting the segments that ended before the window.
    fn advance(&mut self, t: Time) -> Result<(), LedgerError> {
        let t = t.as_micros();
        if t < self.now {
            return Err(backwards(self.now, t));
        }
        self.now = t;
        let from = t.saturating_sub(self.window);
        while self.segments.get(1).is_some_and(|next| next.start <= from) {
            self.segments.pop_front();
        }
        Ok(())
    }
}

/// A member's active spans, oldest first: the first kept in place, where a reading finds it
/// without following a pointer (most members have one span or none), the others after it.
#[derive(Debug, Clone, Default)]
struct Spans {
    first: Option<Span>,
    rest: VecDeque<Span>,
}

/// An active span `[start, end)`; no end while it goes on.
type Span = (Edge, Option<Edge>);

impl Spans {
    fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    fn front(&self) -> Option<&Span> {
        self.first.as_ref()
    }

    fn back_mut(&mut self) -> Option<&mut Span> {
        match self.rest.back_mut() {
            Some(last) => Some(last),
            None => self.first.as_mut(),
        }
    }

    fn push_back(&mut self, span: Span) {
        match self.first {
            None => self.first = Some(span),
            Some(_) => self.rest.push_back(span),
        }
    }

    fn pop_back(&mut self) {
        if self.rest.pop_back().is_none() {
            self.first = None;
        }
    }

    /// Forgets the spans that ended at or before `from`.
    fn forget_before(&mut self, from: u64) {
        while self
            .first
            .is_some_and(|span| span.1.is_some_and(|end| end.at <= from))
        {
            self.first = self.rest.pop_front();
        }
    }

    fn iter(&self) -> impl Iterator<Item = &Span> {
        self.first.iter().chain(&self.rest)
    }
}

/// An end of an active span: the instant, and the unit rate's running integral there.
#[derive(Debug, Clone, Copy)]
struct Edge {
    at: u64,
    running: DoubleDouble,
}

/// Entitlement shared out among the members active in one place, each in proportion to its
/// weight (member `i` has the rate `wᵢ / Σ w` of the active members), integrated over a
/// sliding window for each member.
///
/// When a member joins or leaves, every active member's rate changes; kept one rate window
/// per member, that is one new segment per member at every join or leave. Here only the rate
/// per unit of weight (`1 / Σ w`) is kept as a [`RateWindow`], with each member's active
/// spans, each end with the unit rate's running integral there: a member's reading is its
/// weight times the unit rate's integral over the parts of the window it was active in, the
/// whole window's integral or one difference of running integrals per span, amortised O(1).
#[derive(Debug, Clone)]
pub struct SharedWindow {
    unit: RateWindow,
    weights: Vec<f64>,
    active: Vec<bool>,
    /// Per member: its weight while it is active, else 0.
    active_weights: Vec<f64>,
    /// Per member: its active spans `[start, end)` that may overlap the window, oldest first,
    /// each end with the unit rate's running integral there; the last one is open (no end)
    /// while the member is active.
    spans: Vec<Spans>,
    /// The unit rate's running integral at the start of the window and now, and when.
    edges: Option<(u64, DoubleDouble, DoubleDouble)>,
}

impl SharedWindow {
    /// Members of the given weights (finite, non-negative), none active yet, integrated over
    /// `window` µs.
    pub fn new(weights: Vec<f64>, window: u64) -> Result<SharedWindow, LedgerError> {
        if weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(LedgerError::BadRate {
                expected: weights.len(),
                found: weights,
            });
        }
        let n = weights.len();
        Ok(SharedWindow {
            unit: RateWindow::new(window),
            weights,
            active: vec![false; n],
            active_weights: vec![0.0; n],
            spans: vec![Spans::default(); n],
            edges: None,
        })
    }

    /// Whether `member` is active.
    pub fn is_active(&self, member: usize) -> bool {
        self.active[member]
    }

    /// From `t` on, `member` is active (`true`) or not. The rates change only at the next
    /// [`Self::settle`], which must come at the same instant, once every member that joins or
    /// leaves then has.
    pub fn set_active(&mut self, t: Time, member: usize, active: bool) -> Result<(), LedgerError> {
        self.unit.advance(t)?;
        if self.active[member] == active {
            return Ok(());
        }
        self.active[member] = active;
        self.active_weights[member] = if active { self.weights[member] } else { 0.0 };
        let now = Edge {
            at: self.unit.now,
            running: self.unit.running_now(),
        };
        let spans = &mut self.spans[member];
        // Spans are also forgotten here, not only when read: a member whose readings are never
        // asked for (a slot no priority reads) keeps no more than the window holds.
        spans.forget_before(now.at.saturating_sub(self.unit.window));
        if active {
            match spans.back_mut() {
                // Back in the same instant it left: the span goes on.
                Some(last) if last.1.is_some_and(|end| end.at == now.at) => last.1 = None,
                _ => spans.push_back((now, None)),
            }
        } else if let Some(last) = spans.back_mut() {
            if last.0.at == now.at {
                // Gone in the same instant it came: the span never was.
                spans.pop_back();
            } else {
                last.1 = Some(now);
            }
        }
        Ok(())
    }

    /// The rates from `t` on: `1 / Σ w` per unit of weight over the active members (0 while
    /// none is).
    pub fn settle(&mut self, t: Time) -> Result<(), LedgerError> {
        // Adding 0 for an inactive member leaves the sum as it is, bit for bit (weights are not
        // negative), and spares a branch no predictor guesses.
        let total: f64 = self.active_weights.iter().sum();
        self.unit
            .set(t, if total > 0.0 { 1.0 / total } else { 0.0 })
    }

    /// The rate per unit of weight as last settled (`1 / Σ w` of the active members, 0 while
    /// none is).
    pub fn unit_rate(&self) -> f64 {
        self.unit.rate()
    }

    /// `member`'s entitlement integrated over the window ending at `t`, in rate × seconds, and
    /// the last instant up to which that reading holds if no member joins or leaves and the
    /// rates are not settled anew meanwhile: forever when it has not been active in the window,
    /// or when it has been active over the whole window at one rate; until its oldest span
    /// starts to leave the window when it is no longer active; else `t` itself.
    #[inline]
    pub fn read(&mut self, t: Time, member: usize) -> Result<(f64, Time), LedgerError> {
        if !self.spans[member].is_empty() {
            return self.read_spans(t, member);
        }
        // Never active, or not since the window (most readings, in the engine's per-resource
        // accounting): nothing to move, and inlined where it is asked.
        match t.as_micros() < self.unit.now {
            true => Err(backwards(self.unit.now, t.as_micros())),
            false => Ok((0.0, Time(u64::MAX))),
        }
    }

    /// [`Self::read`] for a member with spans that may overlap the window.
    fn read_spans(&mut self, t: Time, member: usize) -> Result<(f64, Time), LedgerError> {
        self.unit.advance(t)?;
        let (now, window) = (self.unit.now, self.unit.window);
        let from = now.saturating_sub(window);
        let spans = &mut self.spans[member];
        spans.forget_before(from);
        let weight = self.weights[member];
        match spans.front() {
            None => Ok((0.0, Time(u64::MAX))),
            // Open, so the only span left: active over the whole window.
            Some((start, None)) if start.at <= from => {
                let value = weight * self.unit.integral(t)?;
                Ok((value, self.unit.steady_until()))
            }
            Some(&(first, _)) => {
                let (at_from, at_now) = match self.edges {
                    Some((at, at_from, at_now)) if at == now => (at_from, at_now),
                    _ => {
                        let edges = (self.unit.running_at_window_start(), self.unit.running_now());
                        self.edges = Some((now, edges.0, edges.1));
                        edges
                    }
                };
                let part = |&(start, end): &(Edge, Option<Edge>)| {
                    let start = if start.at < from {
                        at_from
                    } else {
                        start.running
                    };
                    end.map_or(at_now, |end| end.running).minus(start)
                };
                let spans = &self.spans[member];
                // Mostly one span: summed without walking the ring's two halves.
                let parts = if spans.rest.is_empty() {
                    spans.first.as_ref().map_or(0.0, part)
                } else {
                    spans.iter().map(part).sum::<f64>()
                };
                let value = weight * parts / 1e6;
                let until = match self.active[member] {
                    true => now,
                    false => (first.at.max(from) + window).max(now),
                };
                Ok((value, Time(until)))
            }
        }
    }
}

fn backwards(now: u64, asked: u64) -> LedgerError {
    LedgerError::TimeWentBackwards {
        now: now as f64 / 1e6,
        asked: asked as f64 / 1e6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: f64) -> Time {
        Time::from_secs_f64(seconds)
    }

    #[test]
    fn service_by_hand() {
        // Window 3 s: CPU over [0, 2), disk over [2.5, 4), CPU again from 5.
        let mut w = ServiceWindow::new(2, 3_000_000);
        w.start(at(0.0), 0).unwrap();
        w.stop(at(2.0)).unwrap();
        w.start(at(2.5), 1).unwrap();
        let mut out = [0; 2];
        w.amounts(at(3.0), &mut out).unwrap();
        assert_eq!(out, [2_000_000, 500_000]);
        w.stop(at(4.0)).unwrap();
        w.start(at(5.0), 0).unwrap();
        // Window [2.5, 5.5]: disk 1.5 s, CPU 0.5 s (the open period).
        w.amounts(at(5.5), &mut out).unwrap();
        assert_eq!(out, [500_000, 1_500_000]);
        // Window [3.5, 6.5]: disk 0.5 s (clipped), CPU 1.5 s.
        assert_eq!(w.amount(at(6.5), 1).unwrap(), 500_000);
        assert_eq!(w.amount(at(6.5), 0).unwrap(), 1_500_000);
        assert!(w.amount(at(6.0), 0).is_err());
        assert!(w.amount(at(7.0), 2).is_err());
        assert!(w.start(at(7.0), 2).is_err());
        assert!(w.amounts(at(7.0), &mut [0; 3]).is_err());
    }

    #[test]
    fn a_member_never_read_keeps_only_the_spans_in_its_window() {
        // Window 1 ms, a join or leave every 0.1 ms for 1 s, and never a reading.
        let mut w = SharedWindow::new(vec![1.0, 1.0], 1_000).unwrap();
        for k in 0..10_000u64 {
            w.set_active(Time(k * 100), 0, k % 2 == 0).unwrap();
            w.settle(Time(k * 100)).unwrap();
        }
        assert!(w.spans[0].iter().count() <= 6, "{:?}", w.spans[0]);
    }

    #[test]
    fn rate_by_hand() {
        // Rate 0.5 from 1 s, 0.25 from 2 s, 0 from 10 s; window 3 s.
        let mut w = RateWindow::new(3_000_000);
        w.set(at(1.0), 0.5).unwrap();
        w.set(at(2.0), 0.25).unwrap();
        assert!((w.integral(at(3.0)).unwrap() - (0.5 + 0.25)).abs() < 1e-12);
        assert!((w.integral(at(4.5)).unwrap() - (0.5 * 0.5 + 0.25 * 2.5)).abs() < 1e-12);
        w.set(at(10.0), 0.0).unwrap();
        assert!((w.integral(at(11.0)).unwrap() - 0.25 * 2.0).abs() < 1e-12);
        assert_eq!(w.integral(at(13.0)).unwrap(), 0.0);
        assert!(w.set(at(14.0), f64::NAN).is_err());
        assert!(w.integral(at(12.0)).is_err());
    }
}
