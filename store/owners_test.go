package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

func TestOwners(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	alice := store.WithOwner(ctx, "alice")
	bob := store.WithOwner(ctx, "bob")

	t.Run("RecordedOnEveryKind", func(t *testing.T) {
		_, err := s.SubmitRuns(alice, []store.NewRun{{ID: "r-alice", ScenarioJSON: []byte(`{"a":1}`), Direct: true}}, 0, t0, nil)
		require.NoError(t, err)
		_, err = s.CreateSweep(bob, store.Sweep{ID: "sw-bob", ScenarioJSON: []byte(`{}`), AxesJSON: []byte(`[]`)}, nil, t0)
		require.NoError(t, err)
		_, _, err = s.CreatePlan(alice, store.Plan{ID: "p-alice", ScenarioJSON: []byte(`{}`), RequestJSON: []byte(`{}`)}, t0)
		require.NoError(t, err)
		content := []byte("{\"t\":0}\n")
		sum := sha256.Sum256(content)
		sha := hex.EncodeToString(sum[:])
		_, err = s.PutTrace(bob, sha, "t", content, 1, t0)
		require.NoError(t, err)
		_, err = s.PutCalibration(alice, store.CalibrationInfo{CalibrationKey: store.CalibrationKey{SHA256: sha}, ResultJSON: []byte(`{}`), CreatedAt: t0}, content)
		require.NoError(t, err)

		for _, c := range []struct {
			kind store.OwnerKind
			id   string
			want string
		}{{store.OwnedRun, "r-alice", "alice"}, {store.OwnedSweep, "sw-bob", "bob"}, {store.OwnedPlan, "p-alice", "alice"}, {store.OwnedTrace, sha, "bob"}} {
			got, err := s.OwnerOf(ctx, c.kind, c.id)
			require.NoError(t, err, c.kind)
			assert.Equal(t, store.Owner{User: c.want, Known: true}, got, c.kind)
		}
		got, err := s.CalibrationOwner(ctx, store.CalibrationKey{SHA256: sha})
		require.NoError(t, err)
		assert.Equal(t, store.Owner{User: "alice", Known: true}, got)

		// The first to create a row owns it: the same scenario asked again by bob stays alice's.
		_, err = s.SubmitRuns(bob, []store.NewRun{{ID: "r-alice", ScenarioJSON: []byte(`{"a":1}`), Direct: true}}, 0, t0, nil)
		require.NoError(t, err)
		got, err = s.OwnerOf(ctx, store.OwnedRun, "r-alice")
		require.NoError(t, err)
		assert.Equal(t, "alice", got.User)

		u, err := s.UsageOf(ctx, "bob")
		require.NoError(t, err)
		assert.Equal(t, int64(len(content)), u.UploadBytes, "bob uploaded the trace")
		assert.Equal(t, 0, u.UnfinishedRuns)
		// The same input fitted again with other options is the same upload.
		_, err = s.PutCalibration(alice, store.CalibrationInfo{CalibrationKey: store.CalibrationKey{SHA256: sha, Skip: 3}, ResultJSON: []byte(`{}`), CreatedAt: t0}, content)
		require.NoError(t, err)
		u, err = s.UsageOf(ctx, "alice")
		require.NoError(t, err)
		assert.Equal(t, int64(len(content)), u.UploadBytes, "alice uploaded the calibration input once")
		assert.Equal(t, 1, u.UnfinishedRuns)
	})

	t.Run("BackgroundPointsTakeTheirSweepsOwner", func(t *testing.T) {
		// A sweep fed in the background submits with no user in the context.
		_, err := s.SubmitRuns(ctx, []store.NewRun{{ID: "r-point", ScenarioJSON: []byte(`{"p":1}`)}}, 0, t0, nil)
		require.NoError(t, err)
		require.NoError(t, s.AddSweepPoints(ctx, "sw-bob", 0, []store.SweepPoint{{ValuesJSON: []byte(`[1]`), RunID: "r-point"}}))
		got, err := s.OwnerOf(ctx, store.OwnedRun, "r-point")
		require.NoError(t, err)
		assert.Equal(t, "bob", got.User)
		// alice's run listed by bob's sweep stays alice's.
		require.NoError(t, s.AddSweepPoints(ctx, "sw-bob", 1, []store.SweepPoint{{ValuesJSON: []byte(`[2]`), RunID: "r-alice"}}))
		got, err = s.OwnerOf(ctx, store.OwnedRun, "r-alice")
		require.NoError(t, err)
		assert.Equal(t, "alice", got.User)

		u, err := s.UsageOf(ctx, "bob")
		require.NoError(t, err)
		require.Len(t, u.Sweeps, 1)
		assert.Equal(t, "sw-bob", u.Sweeps[0].ID)
		assert.Equal(t, 0, u.Sweeps[0].Finished, "both points are queued")
		assert.Equal(t, 1, u.UnfinishedRuns, "r-point is bob's")
	})

	t.Run("WaitersOtherThan", func(t *testing.T) {
		// r-alice is listed by bob's active sweep: alice may not cancel it from under him.
		w, err := s.WaitersOtherThan(ctx, "r-alice", "alice")
		require.NoError(t, err)
		assert.Equal(t, []store.Waiter{{Kind: store.OwnedSweep, ID: "sw-bob", Owner: store.Owner{User: "bob", Known: true}}}, w)
		w, err = s.WaitersOtherThan(ctx, "r-alice", "bob")
		require.NoError(t, err)
		assert.Empty(t, w, "bob's own sweep does not stop bob")
		require.NoError(t, s.CancelSweep(ctx, "sw-bob"))
		w, err = s.WaitersOtherThan(ctx, "r-alice", "alice")
		require.NoError(t, err)
		assert.Empty(t, w, "a cancelled sweep waits on nothing")
	})

	t.Run("OwnersOf", func(t *testing.T) {
		got, err := s.OwnersOf(ctx, store.OwnedRun, []string{"r-alice", "r-point", "missing"})
		require.NoError(t, err)
		assert.Equal(t, map[string]store.Owner{"r-alice": {User: "alice", Known: true}, "r-point": {User: "bob", Known: true}}, got)
		_, err = s.OwnersOf(ctx, "table", nil)
		assert.ErrorIs(t, err, store.ErrInvalid)
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.OwnerOf(ctx, store.OwnedPlan, "nope")
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.OwnerOf(ctx, "table", "x")
		assert.ErrorIs(t, err, store.ErrInvalid)
	})
}

// TestMigrationLeavesOldRowsWithoutOwner: rows stored before 00010 have no owner (Known=false),
// which is not the same as the owner "" of a server without identities.
func TestMigrationLeavesOldRowsWithoutOwner(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	s := mustOpenAt(t, path)
	_, err := s.SubmitRuns(ctx, []store.NewRun{{ID: "old", ScenarioJSON: []byte(`{}`), Direct: true}}, 0, t0, nil)
	require.NoError(t, err)
	_, _, err = s.CreatePlan(ctx, store.Plan{ID: "old-plan", ScenarioJSON: []byte(`{}`), RequestJSON: []byte(`{}`)}, t0)
	require.NoError(t, err)
	// As a database migrated to 00009 only (and so without 00029's indexes on owner either).
	for _, q := range []string{`DROP INDEX sweeps_owner_active`, `DROP INDEX calibrations_owner`, `DROP INDEX traces_owner`,
		`DELETE FROM goose_db_version WHERE version_id = 29`,
		`DROP INDEX runs_owner_unfinished`, `ALTER TABLE runs DROP COLUMN owner`,
		`ALTER TABLE sweeps DROP COLUMN owner`, `ALTER TABLE plans DROP COLUMN owner`,
		`ALTER TABLE traces DROP COLUMN owner`, `ALTER TABLE calibrations DROP COLUMN owner`,
		`DELETE FROM goose_db_version WHERE version_id = 10`} {
		_, err = s.DB().ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	require.NoError(t, s.Close())

	s = mustOpenAt(t, path)
	got, err := s.OwnerOf(ctx, store.OwnedRun, "old")
	require.NoError(t, err)
	assert.Equal(t, store.Owner{}, got)
	got, err = s.OwnerOf(ctx, store.OwnedPlan, "old-plan")
	require.NoError(t, err)
	assert.False(t, got.Known)
	// A plan listing the old run in the background does not claim it.
	_, _, err = s.CreatePlan(store.WithOwner(ctx, "carol"), store.Plan{ID: "new-plan", ScenarioJSON: []byte(`{"n":1}`), RequestJSON: []byte(`{}`)}, t0)
	require.NoError(t, err)
	require.NoError(t, s.AddPlanPoints(ctx, "new-plan", []string{"x"}, []string{"old"}))
	got, err = s.OwnerOf(ctx, store.OwnedRun, "old")
	require.NoError(t, err)
	assert.False(t, got.Known, "an old run keeps no owner")
	w, err := s.WaitersOtherThan(ctx, "old", "dave")
	require.NoError(t, err)
	assert.Equal(t, []store.Waiter{{Kind: store.OwnedPlan, ID: "new-plan", Owner: store.Owner{User: "carol", Known: true}}}, w)
}
