package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/scalein-planner/scalein/internal/pgtest"
)

// BenchmarkWorkersThroughput measures the throughput of the job queue on PostgreSQL: one
// `serve -workers 0` and one or two `worker -concurrency 1` processes; each iteration submits a
// batch of distinct scenarios through the API and waits until all are done. Run with
//
//	go test -run '^$' -bench WorkersThroughput -benchtime 3x ./cmd/scalein
//
// runs/s is the batch size over the wall time from the first submission to the last run done.
func BenchmarkWorkersThroughput(b *testing.B) {
	for _, c := range []struct {
		preset string
		batch  int
	}{{"e2.json", 32}, {"mooncake-16to12.json", 8}} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/runs=%d/workers=%d", c.preset, c.batch, workers), func(b *testing.B) {
				benchThroughput(b, c.preset, c.batch, workers)
			})
		}
	}
}

func benchThroughput(b *testing.B, preset string, batch, workers int) {
	cluster := pgtest.Require(b)
	dsn := cluster.NewDatabase(b)
	server := startProc(b, "serve", "serve", "-addr", "127.0.0.1:0", "-db", dsn, "-workers", "0", "-queue", "1000", "-runs-per-minute", "100000")
	urlPattern := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)
	base := waitFor(b, server, urlPattern)
	for i := range workers {
		w := startProc(b, fmt.Sprintf("worker-%d", i), "worker", "-db", dsn, "-concurrency", "1")
		waitFor(b, w, regexp.MustCompile(`working runs`))
	}
	iter := 0
	for b.Loop() {
		ids := make([]string, 0, batch)
		for i := range batch {
			b.StopTimer()
			sc := renamed(b, preset, fmt.Sprintf("bench %d/%d", iter, i))
			b.StartTimer()
			resp, err := http.Post(base+"api/v1/runs", "application/json", bytes.NewReader(sc))
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var created struct{ ID string }
			if err := json.Unmarshal(body, &created); err != nil || resp.StatusCode != http.StatusAccepted {
				b.Fatalf("submit: %d %s", resp.StatusCode, body)
			}
			ids = append(ids, created.ID)
		}
		for _, id := range ids {
			for {
				v, err := getRun(base, id)
				if err != nil {
					b.Fatal(err)
				}
				if v.Status == "done" {
					break
				}
				if v.Status != "queued" && v.Status != "running" {
					b.Fatalf("run %s ended %s: %s", id, v.Status, v.Error)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		iter++
	}
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "runs/s")
}
