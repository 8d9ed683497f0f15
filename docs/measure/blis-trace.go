//go:build ignore

// Command blis-trace converts a Mooncake-format trace (one JSON object per line with
// timestamp in ms, input_length, output_length and hash_ids, one id per 512-token block)
// into the TraceV2 pair (header YAML and data CSV) that BLIS's `blis replay` reads. It is a
// measuring aid for docs/performance.md ("Side by side with BLIS") and no part of the app's
// build:
//
//	go run docs/measure/blis-trace.go -in sim/traces/mooncake_conversation.jsonl -out /tmp/mooncake
//
// writes /tmp/mooncake.yaml and /tmp/mooncake.csv.
//
// TraceV2 carries no block hashes: a request's tokens are drawn at random, and the only
// sharing it can state is a prefix group, one random token string of a fixed length that
// every member starts with. Mooncake's sharing is a tree (the next turn of a conversation
// starts with the previous turn's blocks), so the tree is cut into chains: a request's
// parent is the earliest request holding the deepest prefix it shares beyond the first
// block, and every request is grouped with the root of its parent chain (its anchor). The
// group's prefix is the fewest blocks any member shares with the anchor. Requests in no
// chain that share their first block form one group of that block. What is lost: the first
// block between a chain and the rest, and any block a later turn shares beyond the group's
// prefix. The program prints how many prefix tokens the grouping keeps against the trace's
// own count (every block of a request already seen earlier in the trace).
package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

type row struct {
	Timestamp    float64 `json:"timestamp"`
	InputLength  int     `json:"input_length"`
	OutputLength int     `json:"output_length"`
	HashIDs      []int64 `json:"hash_ids"`
}

func main() {
	in := flag.String("in", "sim/traces/mooncake_conversation.jsonl", "Mooncake-format JSONL trace")
	out := flag.String("out", "/tmp/mooncake", "output prefix: writes PREFIX.yaml and PREFIX.csv")
	blockTokens := flag.Int("block-tokens", 512, "tokens per hash id in the trace")
	flag.Parse()
	if err := run(*in, *out, *blockTokens); err != nil {
		fmt.Fprintln(os.Stderr, "blis-trace:", err)
		os.Exit(1)
	}
}

func readRows(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var r row
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		if r.InputLength < 1 || r.OutputLength < 1 || r.Timestamp < 0 {
			return nil, fmt.Errorf("%s line %d: input_length and output_length must be ≥ 1 and timestamp ≥ 0", path, line)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	return rows, nil
}

// prefixKey names the first n hash ids of ids.
func prefixKey(ids []int64, n int) string {
	var b strings.Builder
	for _, id := range ids[:n] {
		b.WriteString(strconv.FormatInt(id, 36))
		b.WriteByte('.')
	}
	return b.String()
}

func sharedBlocks(a, b []int64) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func run(in, out string, blockTokens int) error {
	rows, err := readRows(in)
	if err != nil {
		return err
	}
	n := len(rows)

	// owner[prefix] is the first request holding that prefix of hash ids.
	owner := map[string]int{}
	anchor := make([]int, n)
	traceReuse := 0 // tokens in blocks an earlier request already held
	for i, r := range rows {
		deep, parent := 0, -1
		for deep < len(r.HashIDs) {
			o, ok := owner[prefixKey(r.HashIDs, deep+1)]
			if !ok {
				break
			}
			deep, parent = deep+1, o
		}
		traceReuse += min(deep*blockTokens, r.InputLength)
		anchor[i] = i
		if deep >= 2 {
			anchor[i] = anchor[parent]
		}
		for k := deep + 1; k <= len(r.HashIDs); k++ {
			owner[prefixKey(r.HashIDs, k)] = i
		}
	}

	// Chains: members of each anchor, and the prefix every member shares with it.
	members := map[int][]int{}
	for i := range rows {
		members[anchor[i]] = append(members[anchor[i]], i)
	}
	group := make([]string, n)
	prefix := make([]int, n)
	firstBlock := map[int64][]int{} // requests alone in their chain, by first hash id
	for a, m := range members {
		if len(m) == 1 {
			if len(rows[a].HashIDs) > 0 {
				firstBlock[rows[a].HashIDs[0]] = append(firstBlock[rows[a].HashIDs[0]], a)
			}
			continue
		}
		blocks, shortest := len(rows[a].HashIDs), rows[a].InputLength
		for _, i := range m {
			shortest = min(shortest, rows[i].InputLength)
			if i != a {
				blocks = min(blocks, sharedBlocks(rows[a].HashIDs, rows[i].HashIDs))
			}
		}
		length := min(blocks*blockTokens, shortest)
		for _, i := range m {
			group[i], prefix[i] = "chain-"+strconv.Itoa(a), length
		}
	}
	for id, m := range firstBlock {
		if len(m) < 2 {
			continue
		}
		shortest := blockTokens
		for _, i := range m {
			shortest = min(shortest, rows[i].InputLength)
		}
		for _, i := range m {
			group[i], prefix[i] = "block-"+strconv.FormatInt(id, 10), shortest
		}
	}

	// A group's tokens exist once the first member arrives; the others reuse them.
	kept, groups := 0, map[string]bool{}
	for i := range rows {
		if group[i] == "" {
			continue
		}
		if groups[group[i]] {
			kept += prefix[i]
		}
		groups[group[i]] = true
	}

	header := "trace_version: 3\ntime_unit: microseconds\nmode: generated\nwarm_up_requests: 0\n" +
		"workload_spec: \"converted from " + in + " (Mooncake format) by docs/measure/blis-trace.go\"\n"
	if err := os.WriteFile(out+".yaml", []byte(header), 0o644); err != nil {
		return err
	}
	f, err := os.Create(out + ".csv")
	if err != nil {
		return err
	}
	buf := bufio.NewWriterSize(f, 1<<20)
	w := csv.NewWriter(buf)
	cols := []string{"request_id", "client_id", "tenant_id", "slo_class", "session_id", "round_index",
		"prefix_group", "prefix_length", "streaming", "input_tokens", "output_tokens",
		"text_tokens", "image_tokens", "audio_tokens", "video_tokens", "reason_ratio",
		"model", "deadline_us", "server_input_tokens",
		"arrival_time_us", "send_time_us", "first_chunk_time_us", "last_chunk_time_us",
		"num_chunks", "status", "error_message", "finish_reason"}
	if err := w.Write(cols); err != nil {
		return err
	}
	for i, r := range rows {
		arrivalUs := int64(r.Timestamp*1000 + 0.5)
		// BLIS prepends the group's prefix to input_tokens random tokens.
		rec := []string{strconv.Itoa(i), "mooncake", "", "", "", "0",
			group[i], strconv.Itoa(prefix[i]), "true", strconv.Itoa(r.InputLength - prefix[i]), strconv.Itoa(r.OutputLength),
			"0", "0", "0", "0", "0",
			"", "0", "0",
			strconv.FormatInt(arrivalUs, 10), "0", "0", "0",
			"0", "ok", "", ""}
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if err := buf.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("%d requests, %d prefix groups; prefix tokens reusable: %d in the trace's blocks, %d kept by the groups (%.1f %%)\n",
		n, len(groups), traceReuse, kept, 100*float64(kept)/float64(traceReuse))
	return nil
}
