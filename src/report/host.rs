//! How a report words the host facts `lab.json` keeps (see `lab::host`).

/// The report's setup lines for a host: CPU and cores, then OS and kernel.
pub fn setup_lines(facts: &serde_json::Value) -> Vec<String> {
    let get = |k: &str| facts.get(k).and_then(|v| v.as_str());
    let mut lines = Vec::new();
    if let Some(cpu) = get("cpu") {
        match facts.get("cores").and_then(serde_json::Value::as_u64) {
            Some(n) => lines.push(format!("{cpu} ({n} CPUs)")),
            None => lines.push(cpu.to_string()),
        }
    }
    match (get("os"), get("kernel")) {
        (Some(os), Some(kernel)) => lines.push(format!("{os}, {kernel}")),
        (Some(one), None) | (None, Some(one)) => lines.push(one.to_string()),
        (None, None) => {}
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_with_cores_then_os_and_kernel_and_missing_facts_left_out() {
        let facts = serde_json::json!({
            "cpu": "AMD EPYC 7B13", "cores": 2, "os": null, "kernel": "Linux dut 6.18.44 x86_64"
        });
        assert_eq!(
            setup_lines(&facts),
            ["AMD EPYC 7B13 (2 CPUs)", "Linux dut 6.18.44 x86_64"]
        );
    }
}
