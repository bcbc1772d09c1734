//! Stateful DRF as a scheduler's queue: who goes next when users have waited and hogged.
//!
//! A scheduler keeps one `SdrfRanker`, tells it when time moves and what each user holds and
//! whether it waits, and asks whom to serve first. Here two users share a cluster of CPUs and
//! memory: `hog` holds 90 % of the CPUs for two hours while `light` holds little; then both wait
//! with nothing running. DRF would treat them alike (equal dominant shares of zero, ties by
//! id); SDRF remembers the past and serves `light` first until `hog`'s commitment decays.
//!
//! Run with `cargo run -p fairshare-core --example sdrf_queue`.

use fairshare_core::prelude::*;

fn main() -> Result<(), RankError> {
    let users = ["hog", "light"];
    let hour = |h: f64| Time::from_secs_f64(h * 3600.0);
    // δ = 1 − 10⁻⁴ per second: commitments relax with τ ≈ 2.8 h.
    let mut sdrf = SdrfRanker::with_delta(2, 0.9999, PriorityForm::SumOfMaxes, &Share::equal(2));
    sdrf.update(0, &[0.9, 0.3], None)?;
    sdrf.update(1, &[0.1, 0.1], None)?;
    sdrf.advance(hour(2.0))?;
    // Both release everything and queue one task each, `hog` first.
    sdrf.update(0, &[0.0, 0.0], Some(Head::new(hour(2.0), 1)))?;
    sdrf.update(1, &[0.0, 0.0], Some(Head::new(hour(2.0), 2)))?;
    for client in sdrf.iter() {
        let priority = sdrf.priority(client).unwrap_or(f64::NAN);
        println!("{:>5}: priority {priority:.4}", users[client as usize]);
    }
    assert_eq!(sdrf.first(), Some(1), "the light user goes first");
    println!("next: {}", users[sdrf.first().unwrap_or(0) as usize]);

    // Days later the commitment has decayed and both rank alike again (ties by id).
    sdrf.advance(hour(72.0))?;
    println!(
        "after three days: hog {:.6}, light {:.6}",
        sdrf.priority(0).unwrap_or(f64::NAN),
        sdrf.priority(1).unwrap_or(f64::NAN)
    );
    Ok(())
}
