package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/calibrate"
)

// passExport writes one worker's passes (scalein sim -passes FILE -worker N) through a
// temporary file renamed into place when the run succeeds, so a failed run leaves no half file.
type passExport struct {
	path string
	tmp  *os.File // the temporary file, or the device itself when inPlace
	w    *calibrate.PassWriter
	// inPlace is set when path is a device or pipe, written directly and never removed.
	inPlace bool
}

// openPassExport starts an export; with path "" it is a no-op.
func openPassExport(path string, worker int, s *sim.Scenario) (*passExport, error) {
	if path == "" {
		return &passExport{}, nil
	}
	if worker >= s.Fleet.Workers {
		return nil, fmt.Errorf("-worker %d: the fleet has workers 0 to %d", worker, s.Fleet.Workers-1)
	}
	if notRegular(path) {
		// A device or pipe (/dev/null, /dev/stdout) is written in place: renaming a temporary
		// file over it would replace it.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("write the passes: %w", err)
		}
		return &passExport{path: path, tmp: f, inPlace: true, w: calibrate.NewPassWriter(f, worker, 0)}, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".scalein-passes-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("write the passes: %w", err)
	}
	return &passExport{path: path, tmp: tmp, w: calibrate.NewPassWriter(tmp, worker, 0)}, nil
}

func (p *passExport) record() func(sim.PassRecord) {
	if p.w == nil {
		return nil
	}
	return p.w.Record
}

func (p *passExport) commit() error {
	if p.w == nil {
		return nil
	}
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("write the passes %s: %w", p.path, err)
	}
	if err := p.tmp.Close(); err != nil {
		return fmt.Errorf("write the passes %s: %w", p.path, err)
	}
	if p.inPlace {
		p.w = nil
		return nil
	}
	if err := os.Rename(p.tmp.Name(), p.path); err != nil {
		return fmt.Errorf("write the passes %s: %w", p.path, err)
	}
	p.w = nil
	return nil
}

// abort removes the temporary file of an export that was not committed.
func (p *passExport) abort() {
	if p.w != nil {
		p.tmp.Close()
		if !p.inPlace {
			os.Remove(p.tmp.Name())
		}
	}
}
