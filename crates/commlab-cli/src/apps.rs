//! `commlab apps`: every application with its variants and documented parameters.

use crate::failure::Failure;
use commlab_apps::APPS;

pub fn list() -> Result<(), Failure> {
    for a in APPS {
        println!("{}\n  {}\n  variants: {}", a.name, a.summary, a.variants.join(", "));
        for p in a.params {
            println!("  --param {}={:<8} {}", p.name, p.default, p.doc);
        }
        println!();
    }
    Ok(())
}
