//! Allocating with DRF, the way an embedder calls fairshare: the textbook case of the DRF
//! paper — ⟨9 CPU, 18 GB⟩ shared by user A, whose tasks need ⟨1 CPU, 4 GB⟩, and user B, whose
//! tasks need ⟨3 CPU, 1 GB⟩ — first as indivisible tasks, then as divisible demands.
//!
//! Run with `cargo run -p fairshare-core --example allocate_drf`.

use fairshare_core::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let resources = ResourceSet::new([("cpu", 9.0), ("mem", 18.0)])?;

    // Tasks: progressive filling gives each task to the user with the lowest dominant share.
    let clients = [
        TaskClient::new(vec![1.0, 4.0]),
        TaskClient::new(vec![3.0, 1.0]),
    ];
    let fill = fill_tasks(&Policy::Drf, &resources, &clients, FillRule::HeadOfLine)?;
    println!("tasks: A runs {}, B runs {}", fill.tasks[0], fill.tasks[1]);
    assert_eq!(fill.tasks, [3, 2]);

    // Divisible demands: the exact water-filling solution equalises dominant shares at 2/3.
    let demands = [
        DivisibleClient::new(vec![9.0, 36.0]),
        DivisibleClient::new(vec![27.0, 9.0]),
    ];
    let fill = water_fill(&Policy::Drf, &resources, &demands)?;
    for (user, allocation) in ["A", "B"].iter().zip(&fill.allocations) {
        println!(
            "divisible: {user} gets {:.2} CPU, {:.2} GB",
            allocation[0], allocation[1]
        );
    }
    println!("water level {:.4}", fill.level);
    assert!((fill.level - 2.0 / 3.0).abs() < 1e-12);
    Ok(())
}
