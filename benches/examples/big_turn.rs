//! Throwaway probe (not committed): one large tool result per call, paced.
use codeoid_core::canonical::{Part, Role, ToolCall, ToolResult, ToolResultPart, Turn};
use codeoid_core::store::{NewSession, Store};
use std::time::{Duration, Instant};

fn main() {
    let kb: usize = std::env::var("KB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let n: usize = std::env::var("N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../codeoid-core/src/store/record.rs"
    ))
    .unwrap();
    let mut text = String::new();
    let mut i = 1;
    while text.len() < kb * 1024 {
        for line in src.lines() {
            text.push_str(&format!("{i:>6}→{line}\n"));
            i += 1;
            if text.len() >= kb * 1024 {
                break;
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("b.db")).unwrap();
    let ws = codeoid_benches::real_sessions::workspace();
    let s = store.create_session(&ws, NewSession::default()).unwrap().id;
    let mut u = Turn::user_text("Read the record module and explain the write path".to_owned());
    u.id = Some("u0".into());
    store.record_turn(&s, &u).unwrap();
    let mut cpu = Vec::new();
    let mut wall = Vec::new();
    for k in 0..n {
        let id = format!("c{k}");
        let mut a = Turn::new(
            Role::Assistant,
            vec![Part::ToolCall(ToolCall {
                id: id.clone(),
                provider_id: None,
                name: "Read".into(),
                input: serde_json::json!({"file_path": format!("/bench/project/src/f{k}.rs")}),
            })],
        );
        a.id = Some(format!("a{k}"));
        store.record_turn(&s, &a).unwrap();
        let mut r = Turn::new(
            Role::User,
            vec![Part::ToolResult(ToolResult {
                call_id: id,
                parts: vec![ToolResultPart::Text { text: text.clone() }],
                is_error: false,
            })],
        );
        r.id = Some(format!("r{k}"));
        std::thread::sleep(Duration::from_millis(5));
        let c0 = cpu_now();
        let t0 = Instant::now();
        store.record_turn(&s, &r).unwrap();
        wall.push(t0.elapsed());
        cpu.push(cpu_now() - c0);
    }
    cpu.sort();
    wall.sort();
    println!(
        "{kb} KB result: cpu p50 {:?} p90 {:?}; wall p50 {:?} p90 {:?}",
        cpu[n / 2],
        cpu[n * 9 / 10],
        wall[n / 2],
        wall[n * 9 / 10]
    );
}
fn cpu_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
