//! `messaging.poll_mechanism` and the round-trip parameters on the command line (issue 34
//! item 3): bad names are one-line errors with exit status 2.

use crate::common;
use common::*;

#[test]
fn bad_poll_mechanism_and_params_are_clear_errors() {
    let smp = ["--set", "node.procs_per_node=2", "--set", "node.tag_lock_cycles=20"];
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "am-latency", "--machine", "blizzard-s"];
        a.extend_from_slice(&smp);
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let args = run(&["--set", "messaging.poll_mechanism=lania"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    bad_input(&args, &["messaging.poll_mechanism", "lanai", "typhoon0", "`lania`"]);
    // A mechanism on a machine without the receive path's cost (cm5 has none).
    bad_input(
        &["run", "am-latency", "--machine", "cm5", "--set", "messaging.poll_mechanism=dma"],
        &["messaging.poll_receive_cycles", "required"],
    );
    let args = run(&["--set", "messaging.poll_mechanism=dma", "--param", "from=elsewhere"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    bad_input(&args, &["from=elsewhere", "compute or protocol"]);
    bad_input(&["run", "am-latency", "--machine", "blizzard-s", "--param", "bytes=12"], &["bytes=12", "multiple of 8"]);
    bad_input(
        &["run", "bulk-bw", "--machine", "blizzard-s", "--param", "stream=4", "--param", "repeat=2"],
        &["stream", "repeat"],
    );
}
